#include "tokenizers/word_tokenizer.h"

#include <cctype>

#include "attn/error.h"

namespace attn {

namespace {

bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Characters that belong to words: letters, digits, the apostrophe and hyphen, and every
// byte of a multi-byte UTF-8 character (é, ü, 日本).
bool is_word_byte(unsigned char c) { return std::isalnum(c) || c == '\'' || c == '-' || c == '_' || c >= 0x80; }

}  // namespace

std::vector<std::string> split_tokens(const std::string& text) {
  std::vector<std::string> tokens;
  std::string word;
  const auto flush = [&] {
    if (!word.empty()) tokens.push_back(word);
    word.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '<') {
      // A special token such as <BOS> or <PAD> stays whole.
      std::size_t end = i + 1;
      while (end < text.size() && is_word_byte(static_cast<unsigned char>(text[end]))) ++end;
      if (end < text.size() && text[end] == '>' && end > i + 1) {
        flush();
        tokens.push_back(text.substr(i, end - i + 1));
        i = end;
        continue;
      }
    }
    if (is_space(c)) {
      flush();
    } else if (is_word_byte(c)) {
      word += static_cast<char>(c);
    } else {
      flush();
      tokens.emplace_back(1, static_cast<char>(c));
    }
  }
  flush();
  return tokens;
}

const std::string& WordTokenizer::piece(std::size_t id) const {
  if (id >= vocabulary_.size())
    throw InternalError("WordTokenizer::piece: id " + std::to_string(id) + " past the vocabulary's " +
                        std::to_string(vocabulary_.size()) + " tokens");
  return vocabulary_.token(id);
}

Encoding WordTokenizer::encode(const std::string& text, bool /*add_special_tokens*/) const {
  Encoding out;
  const auto unknown = vocabulary_.unknown_id();
  for (const std::string& word : split_tokens(text)) {
    const auto id = vocabulary_.find(word);
    if (!id && !unknown)
      throw InputError("text", "",
                       "unknown token \"" + word + "\" and the vocabulary has no \"" +
                           Vocabulary::spelling(SpecialRole::Unknown) + "\"");
    out.ids.push_back(id ? *id : *unknown);
    out.pieces.push_back(vocabulary_.token(out.ids.back()));
    out.unknown.push_back(!id);
  }
  return out;
}

std::string WordTokenizer::decode(const std::vector<std::size_t>& ids, bool skip_special_tokens) const {
  std::string text;
  for (const std::size_t id : ids) {
    if (skip_special_tokens && is_special(id)) continue;
    text += (text.empty() ? "" : " ") + piece(id);
  }
  return text;
}

bool WordTokenizer::is_special(std::size_t id) const {
  for (const SpecialRole role : {SpecialRole::Pad, SpecialRole::Unknown, SpecialRole::Begin, SpecialRole::End})
    if (vocabulary_.special_id(role) == id) return true;
  return false;
}

}  // namespace attn
