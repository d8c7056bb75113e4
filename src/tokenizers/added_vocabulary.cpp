#include "tokenizers/added_vocabulary.h"

#include <algorithm>

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

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)), nodes_(1) {
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const std::string& content = tokens_[i].content;
    if (content.empty()) continue;
    std::uint32_t at = 0;
    for (const char c : content) {
      const auto byte = static_cast<unsigned char>(c);
      auto& next = nodes_[at].next;
      auto it = std::lower_bound(next.begin(), next.end(), std::make_pair(byte, std::uint32_t{0}));
      if (it == next.end() || it->first != byte) {
        it = next.insert(it, {byte, static_cast<std::uint32_t>(nodes_.size())});
        const std::uint32_t child = it->second;
        nodes_.emplace_back();
        at = child;
      } else {
        at = it->second;
      }
    }
    // Two tokens with one content: the first listed is found, as before the trie.
    if (nodes_[at].token < 0) nodes_[at].token = static_cast<std::int64_t>(i);
  }
}

std::int64_t AddedTokenMatcher::longest_at(const std::string& text, std::size_t pos) const {
  std::int64_t best = -1;
  std::uint32_t at = 0;
  for (std::size_t i = pos; i < text.size(); ++i) {
    const auto& next = nodes_[at].next;
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto it = std::lower_bound(next.begin(), next.end(), std::make_pair(byte, std::uint32_t{0}));
    if (it == next.end() || it->first != byte) break;
    at = it->second;
    if (nodes_[at].token >= 0) best = nodes_[at].token;
  }
  return best;
}

std::vector<TextSection> AddedTokenMatcher::split(const std::string& text) const {
  std::vector<TextSection> sections;
  std::size_t section_start = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::int64_t found = nodes_[0].next.empty() ? -1 : longest_at(text, pos);
    if (found < 0) {
      const std::size_t length = utf8_sequence_length(text, pos);
      pos += length == 0 ? 1 : length;
      continue;
    }
    const AddedToken& token = tokens_[static_cast<std::size_t>(found)];
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
