#include "steps/tokenizer.h"

#include <algorithm>
#include <cctype>

#include "attn/error.h"

namespace attn {

namespace {

bool is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Characters that belong to words: letters, digits, the apostrophe and hyphen, and every
// byte of a multi-byte UTF-8 character (é, ü, 日本).
bool is_word_byte(unsigned char c) { return std::isalnum(c) || c == '\'' || c == '-' || c == '_' || c >= 0x80; }

std::string lowercase(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

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

Vocabulary::Vocabulary(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  for (std::size_t id = 0; id < tokens_.size(); ++id) {
    // The model loader reports a duplicate with its JSON path; one here is a bug.
    if (!ids_.emplace(tokens_[id], id).second)
      throw InternalError("Vocabulary: duplicate token \"" + tokens_[id] + "\" (the loader lets none through)");
    lower_ids_.emplace(lowercase(tokens_[id]), id);
  }
}

std::optional<std::size_t> Vocabulary::exact(const std::string& token) const {
  const auto it = ids_.find(token);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::size_t> Vocabulary::find(const std::string& token) const {
  if (auto id = exact(token)) return id;
  const auto it = lower_ids_.find(lowercase(token));
  if (it == lower_ids_.end()) return std::nullopt;
  return it->second;
}

TokenIds lookup_token_ids(const std::vector<std::vector<std::string>>& batch, const Vocabulary& vocab) {
  // (B lists of tokens) -> ids (B,S), S the longest list
  std::size_t S = 0;
  for (const auto& sentence : batch) S = std::max(S, sentence.size());
  const std::size_t B = batch.size();
  TokenIds out;
  out.ids = Tensor({B, S}, {"B", "S"});
  const auto pad = vocab.pad_id();
  for (std::size_t b = 0; b < B; ++b) {
    out.lengths.push_back(batch[b].size());
    std::vector<std::string> tokens;
    std::vector<bool> unknown;
    for (std::size_t s = 0; s < S; ++s) {
      std::size_t id;
      if (s < batch[b].size()) {
        const auto found = vocab.find(batch[b][s]);
        if (found) {
          id = *found;
        } else if (auto unk = vocab.unknown_id()) {
          id = *unk;
        } else {
          throw InternalError("lookup_token_ids: unknown token \"" + batch[b][s] +
                              "\" and the vocabulary has no \"<UNK>\" (check_token_input lets none through)");
        }
        tokens.push_back(batch[b][s]);
        unknown.push_back(!found);
      } else {
        if (!pad)
          throw InternalError(
              "lookup_token_ids: sentences of different lengths and no \"<PAD>\" (check_token_input lets none "
              "through)");
        id = *pad;
        tokens.emplace_back(Vocabulary::kPad);
        unknown.push_back(false);
      }
      out.ids.data[b * S + s] = static_cast<double>(id);
    }
    out.tokens.push_back(std::move(tokens));
    out.unknown.push_back(std::move(unknown));
  }
  return out;
}

}  // namespace attn
