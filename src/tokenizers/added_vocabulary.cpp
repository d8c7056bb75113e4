#include "tokenizers/added_vocabulary.h"

#include <array>

#include "tokenizers/unicode_text.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

std::size_t previous_character_start(const std::string& text, std::size_t pos) {
  std::size_t start = pos - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return start;
}

bool is_word_character(char32_t c) { return c == U'_' || is_unicode_alphanumeric(c); }

// added_vocabulary.rs's single_word test: no word character right before or right after.
bool stands_alone(const std::string& text, std::size_t begin, std::size_t end) {
  if (begin > 0 && is_word_character(utf8_code_point(text, previous_character_start(text, begin)))) return false;
  return end >= text.size() || !is_word_character(utf8_code_point(text, end));
}

// The longest token starting at `pos`, if any (index into tokens).
std::optional<std::size_t> longest_at(const std::string& text, std::size_t pos, const std::vector<AddedToken>& tokens) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& content = tokens[i].content;
    if (content.empty() || (best && content.size() <= tokens[*best].content.size())) continue;
    if (text.compare(pos, content.size(), content) == 0) best = i;
  }
  return best;
}

}  // namespace

std::vector<TextSection> split_added_tokens(const std::string& text, const std::vector<AddedToken>& tokens) {
  std::vector<TextSection> sections;
  // The bytes an added token can start with: elsewhere no token is looked for (Llama 3 has
  // 256 added tokens, all starting with '<').
  std::array<bool, 256> starts{};
  for (const AddedToken& token : tokens)
    if (!token.content.empty()) starts[static_cast<unsigned char>(token.content[0])] = true;
  std::size_t section_start = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const bool may_start = starts[static_cast<unsigned char>(text[pos])];
    const auto found = may_start ? longest_at(text, pos, tokens) : std::nullopt;
    if (!found) {
      const std::size_t length = utf8_sequence_length(text, pos);
      pos += length == 0 ? 1 : length;
      continue;
    }
    const AddedToken& token = tokens[*found];
    std::size_t begin = pos, end = pos + token.content.size();
    // The automaton goes on after this match whether or not the token may stand here.
    pos = end;
    if (token.single_word && !stands_alone(text, begin, end)) continue;
    if (token.lstrip) {
      while (begin > section_start) {
        const std::size_t start = previous_character_start(text, begin);
        if (!is_unicode_whitespace(utf8_code_point(text, start))) break;
        begin = start;
      }
    }
    if (token.rstrip) {
      while (end < text.size() && is_unicode_whitespace(utf8_code_point(text, end)))
        end += utf8_sequence_length(text, end);
    }
    if (begin > section_start)
      sections.push_back({std::nullopt, text.substr(section_start, begin - section_start), section_start});
    sections.push_back({token.id, text.substr(begin, end - begin), begin});
    section_start = end;
    pos = end;
  }
  if (section_start < text.size()) sections.push_back({std::nullopt, text.substr(section_start), section_start});
  return sections;
}

}  // namespace attn
