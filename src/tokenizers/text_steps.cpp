#include "tokenizers/text_steps.h"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "attn/error.h"
#include "core/memory_budget.h"
#include "tokenizers/unicode_text.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

std::string regex_replace_all(const PcreRegex& pattern, const std::string& text, const std::string& to) {
  std::string out;
  std::size_t pos = 0;
  for (const auto& [begin, end] : pattern.find_all(text)) {
    out.append(text, pos, begin - pos);
    out += to;
    pos = end;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

std::string strip_whitespace(const std::string& text, bool left, bool right) {
  std::size_t begin = 0, end = text.size();
  while (left && begin < end) {
    const std::size_t length = utf8_sequence_length(text, begin);
    if (length == 0 || !is_unicode_whitespace(utf8_code_point(text, begin))) break;
    begin += length;
  }
  while (right && end > begin) {
    std::size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    if (!is_unicode_whitespace(utf8_code_point(text, start))) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

// A piece of a section and whether the pattern matched it (pattern.rs's find_matches).
using Piece = std::pair<std::pair<std::size_t, std::size_t>, bool>;

std::vector<Piece> match_pieces(const std::vector<std::pair<std::size_t, std::size_t>>& matches, std::size_t size,
                                bool invert) {
  std::vector<Piece> pieces;
  std::size_t previous = 0;
  for (const auto& match : matches) {
    if (previous != match.first) pieces.push_back({{previous, match.first}, invert});
    pieces.push_back({match, !invert});
    previous = match.second;
  }
  if (previous != size) pieces.push_back({{previous, size}, invert});
  return pieces;
}

// Folds the delimiters into their neighbours as normalizer.rs's split does.
std::vector<Piece> apply_behavior(std::vector<Piece> pieces, SplitBehavior behavior) {
  std::vector<Piece> out;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::Isolated:
      return pieces;
    case SplitBehavior::Removed:
      for (const Piece& piece : pieces)
        if (!piece.second) out.push_back(piece);
      return out;
    case SplitBehavior::MergedWithPrevious:
    case SplitBehavior::Contiguous:
      for (const Piece& piece : pieces) {
        const bool merge =
            behavior == SplitBehavior::Contiguous ? piece.second == previous_match : piece.second && !previous_match;
        if (merge && !out.empty()) {
          out.back().first.second = piece.first.second;
        } else {
          out.push_back({piece.first, false});
        }
        previous_match = piece.second;
      }
      return out;
    case SplitBehavior::MergedWithNext:
      for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
        if (it->second && !previous_match && !out.empty()) {
          out.back().first.first = it->first.first;
        } else {
          out.push_back({it->first, false});
        }
        previous_match = it->second;
      }
      return {out.rbegin(), out.rend()};
  }
  return pieces;
}

void split_words(const PcreRegex& pattern, SplitBehavior behavior, bool invert, std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (const std::string& word : words) {
    const auto pieces = apply_behavior(match_pieces(pattern.find_all(word), word.size(), invert), behavior);
    for (const Piece& piece : pieces) {
      if (piece.first.second > piece.first.first)
        out.push_back(word.substr(piece.first.first, piece.first.second - piece.first.first));
    }
  }
  words = std::move(out);
}

std::string to_byte_level(const std::string& word) {
  std::string out;
  for (const char byte : word) out += byte_level_character(static_cast<unsigned char>(byte));
  return out;
}

void metaspace(const PreTokenizerStep& step, bool at_text_start, std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string word = replace_literal(words[i], " ", step.replacement);
    const bool prepend = step.prepend == PreTokenizerStep::Prepend::Always ||
                         (step.prepend == PreTokenizerStep::Prepend::First && at_text_start && i == 0);
    if (prepend && word.compare(0, step.replacement.size(), step.replacement) != 0) word = step.replacement + word;
    // An empty replacement (refused when the file is read: tokenizers holds it as one char)
    // would be found at every position and never passed.
    if (!step.split || step.replacement.empty()) {
      out.push_back(word);
      continue;
    }
    // Split before every replacement character (SplitDelimiterBehavior::MergedWithNext).
    std::size_t begin = 0;
    for (std::size_t found = word.find(step.replacement, 1); found != std::string::npos;
         found = word.find(step.replacement, found + step.replacement.size())) {
      if (found > begin) out.push_back(word.substr(begin, found - begin));
      begin = found;
    }
    if (begin < word.size()) out.push_back(word.substr(begin));
  }
  words = std::move(out);
}

}  // namespace

namespace {

// What each normalizer does to the bound: out <= factor * in + added.
void grow(TextGrowth& g, long double factor, long double added = 0) {
  g.factor *= factor;
  g.added = g.added * factor + added;
}

}  // namespace

TextGrowth text_growth(const std::vector<NormalizerStep>& normalizer,
                       const std::vector<PreTokenizerStep>& pre_tokenizer) {
  TextGrowth g;
  for (const NormalizerStep& step : normalizer) {
    switch (step.kind) {
      case NormalizerStep::Kind::Prepend:
        grow(g, 1, static_cast<long double>(step.text.size()));
        break;
      case NormalizerStep::Kind::Replace:
        grow(g, std::max<long double>(1, static_cast<long double>(step.text.size())));
        break;
      case NormalizerStep::Kind::Nfc:
      case NormalizerStep::Kind::Nfd:
        grow(g, 4);
        break;
      case NormalizerStep::Kind::Nfkc:
      case NormalizerStep::Kind::Nfkd:
        grow(g, 12);
        break;
      case NormalizerStep::Kind::Lowercase:
        grow(g, 2);
        break;
      case NormalizerStep::Kind::Strip:
        break;
    }
  }
  // Once a step has cut the section into words, what is added per word is added per byte
  // at most (a word has at least one).
  bool in_words = false;
  for (const PreTokenizerStep& step : pre_tokenizer) {
    const long double r = static_cast<long double>(step.replacement.size());
    switch (step.kind) {
      case PreTokenizerStep::Kind::Split:
        in_words = true;
        break;
      case PreTokenizerStep::Kind::ByteLevel:
        if (step.add_prefix_space) in_words ? grow(g, 2) : grow(g, 1, 1);
        in_words = in_words || step.use_regex;
        grow(g, 2);
        break;
      case PreTokenizerStep::Kind::Metaspace:
        grow(g, std::max<long double>(1, r));
        if (step.prepend != PreTokenizerStep::Prepend::Never) in_words ? grow(g, 1 + r) : grow(g, 1, r);
        in_words = in_words || step.split;
        break;
    }
  }
  return g;
}

std::string normalize(const std::vector<NormalizerStep>& steps, std::string text) {
  for (const NormalizerStep& step : steps) {
    switch (step.kind) {
      case NormalizerStep::Kind::Prepend:
        if (!text.empty()) text = step.text + text;
        break;
      case NormalizerStep::Kind::Replace:
        text = regex_replace_all(*step.pattern, text, step.text);
        break;
      case NormalizerStep::Kind::Nfc:
      case NormalizerStep::Kind::Nfd:
      case NormalizerStep::Kind::Nfkc:
      case NormalizerStep::Kind::Nfkd:
        text = unicode_normalize(text, step.kind == NormalizerStep::Kind::Nfc    ? UnicodeForm::Nfc
                                       : step.kind == NormalizerStep::Kind::Nfd  ? UnicodeForm::Nfd
                                       : step.kind == NormalizerStep::Kind::Nfkc ? UnicodeForm::Nfkc
                                                                                 : UnicodeForm::Nfkd);
        break;
      case NormalizerStep::Kind::Lowercase:
        text = unicode_lowercase(text);
        break;
      case NormalizerStep::Kind::Strip:
        text = strip_whitespace(text, step.left, step.right);
        break;
    }
  }
  return text;
}

std::vector<std::string> pre_tokenize(const std::vector<PreTokenizerStep>& steps, const std::string& section,
                                      bool at_text_start) {
  std::vector<std::string> words{section};
  for (const PreTokenizerStep& step : steps) {
    switch (step.kind) {
      case PreTokenizerStep::Kind::Split:
        split_words(*step.pattern, step.behavior, step.invert, words);
        break;
      case PreTokenizerStep::Kind::ByteLevel:
        if (step.add_prefix_space) {
          for (std::string& word : words)
            if (word.empty() || word[0] != ' ') word = " " + word;
        }
        if (step.use_regex) split_words(*step.pattern, SplitBehavior::Isolated, false, words);
        for (std::string& word : words) word = to_byte_level(word);
        break;
      case PreTokenizerStep::Kind::Metaspace:
        metaspace(step, at_text_start, words);
        break;
    }
  }
  return words;
}

void check_tokenize_memory(const std::string& text, const std::vector<TextSection>& sections,
                           const TextGrowth& growth) {
  long double grown = 0;
  for (const TextSection& section : sections)
    if (!section.id) grown += growth.factor * static_cast<long double>(section.text.size()) + growth.added;
  const long double need = static_cast<long double>(text.size()) * 2 + grown * kTokenizeBytesPerByte;
  const std::uint64_t limit = memory_limit_in_force();
  if (need <= static_cast<long double>(limit)) return;
  throw InputError("text", "",
                   fmt::format("tokenizing it could take about {}: its {} bytes may grow to {:.0f} through the "
                               "tokenizer's normalizer and pre-tokenizer (up to {:.1f} times), at up to {} bytes of "
                               "memory each, more than the limit of {}; use a shorter text or raise --max-memory",
                               memory_text(need), text.size(), static_cast<double>(grown),
                               static_cast<double>(growth.factor), kTokenizeBytesPerByte, memory_text(limit)));
}

}  // namespace attn
