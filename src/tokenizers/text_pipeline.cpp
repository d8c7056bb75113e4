#include "tokenizers/text_pipeline.h"

#include "attn/error.h"
#include "tokenizers/unicode_text.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

// normalizers/bert.rs's is_chinese_char: the CJK Unified Ideographs blocks.
bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// The length of the character at text[pos]. Callers see only checked UTF-8 (encode refuses
// other text): a stray byte is a bug, reported rather than looped on.
std::size_t character_length(const std::string& text, std::size_t pos) {
  const std::size_t length = utf8_sequence_length(text, pos);
  if (length == 0) throw InternalError("text_pipeline: text that is not UTF-8");
  return length;
}

bool is_bert_whitespace(char32_t c) { return c == U'\t' || c == U'\n' || c == U'\r' || is_unicode_whitespace(c); }

bool is_bert_control(char32_t c) {
  if (c == U'\t' || c == U'\n' || c == U'\r') return false;
  return is_unicode_other(c);
}

// pre_tokenizers/bert.rs's is_bert_punc: ASCII punctuation or Unicode punctuation.
bool is_bert_punctuation(char32_t c) {
  const bool ascii =
      (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  return ascii || is_unicode_punctuation(c);
}

std::string clean_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t length = character_length(text, pos);
    const char32_t c = utf8_code_point(text, pos);
    if (c != 0 && c != 0xFFFD && !is_bert_control(c)) {
      if (is_bert_whitespace(c))
        out += ' ';
      else
        out.append(text, pos, length);
    }
    pos += length;
  }
  return out;
}

std::string space_chinese_chars(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t length = character_length(text, pos);
    const bool chinese = is_chinese_char(utf8_code_point(text, pos));
    if (chinese) out += ' ';
    out.append(text, pos, length);
    if (chinese) out += ' ';
    pos += length;
  }
  return out;
}

std::string strip_accents(const std::string& text) {
  const std::string decomposed = unicode_normalize(text, UnicodeForm::Nfd);
  std::string out;
  out.reserve(decomposed.size());
  for (std::size_t pos = 0; pos < decomposed.size();) {
    const std::size_t length = character_length(decomposed, pos);
    if (!is_unicode_nonspacing_mark(utf8_code_point(decomposed, pos))) out.append(decomposed, pos, length);
    pos += length;
  }
  return out;
}

// Splits every word at the characters `is_delimiter` names: dropped (`keep` false) or kept
// as words of one character (SplitDelimiterBehavior::Removed / Isolated).
template <class Predicate>
std::vector<std::string> split_at(const std::vector<std::string>& words, Predicate is_delimiter, bool keep) {
  std::vector<std::string> out;
  for (const std::string& word : words) {
    std::size_t start = 0;
    for (std::size_t pos = 0; pos < word.size();) {
      const std::size_t length = character_length(word, pos);
      if (is_delimiter(utf8_code_point(word, pos))) {
        if (pos > start) out.push_back(word.substr(start, pos - start));
        if (keep) out.push_back(word.substr(pos, length));
        start = pos + length;
      }
      pos += length;
    }
    if (start < word.size()) out.push_back(word.substr(start));
  }
  return out;
}

}  // namespace

std::string bert_normalize(const BertNormalizerOptions& options, const std::string& text) {
  std::string out = options.clean_text ? clean_text(text) : text;
  if (options.handle_chinese_chars) out = space_chinese_chars(out);
  if (options.strip_accents) out = strip_accents(out);
  if (options.lowercase) out = unicode_lowercase_each(out);
  return out;
}

std::string run_normalizers(const std::vector<PipelineNormalizer>& steps, std::string text) {
  for (const PipelineNormalizer& step : steps) {
    if (step.kind == PipelineNormalizer::Kind::Bert)
      text = bert_normalize(step.bert, text);
    else if (step.kind == PipelineNormalizer::Kind::Precompiled)
      text = step.precompiled->normalize(text);
    else
      text = normalize({step.common}, std::move(text));
  }
  return text;
}

std::vector<std::string> run_pre_tokenizers(const std::vector<PipelinePreTokenizer>& steps, const std::string& section,
                                            bool at_text_start) {
  std::vector<std::string> words{section};
  for (const PipelinePreTokenizer& step : steps) {
    switch (step.kind) {
      case PipelinePreTokenizer::Kind::Bert:
        words = split_at(words, is_unicode_whitespace, false);
        words = split_at(words, is_bert_punctuation, true);
        break;
      case PipelinePreTokenizer::Kind::WhitespaceSplit:
        words = split_at(words, is_unicode_whitespace, false);
        break;
      case PipelinePreTokenizer::Kind::Common: {
        // text_steps' pre-tokenizers take one section; each word is one here, and only the
        // first may begin the text (Metaspace's prepend_scheme "first").
        std::vector<std::string> out;
        for (std::size_t i = 0; i < words.size(); ++i) {
          for (std::string& word : pre_tokenize({step.common}, words[i], at_text_start && i == 0))
            out.push_back(std::move(word));
        }
        words = std::move(out);
        break;
      }
    }
  }
  return words;
}

TextGrowth pipeline_text_growth(const std::vector<PipelineNormalizer>& normalizer,
                                const std::vector<PipelinePreTokenizer>& pre_tokenizer) {
  std::vector<NormalizerStep> common_normalizer;
  std::vector<PreTokenizerStep> common_pre_tokenizer;
  long double other = 1;  // BertNormalizer's and Precompiled's factors
  for (const PipelineNormalizer& step : normalizer) {
    if (step.kind == PipelineNormalizer::Kind::Common) common_normalizer.push_back(step.common);
    if (step.kind == PipelineNormalizer::Kind::Bert) other *= 16;
    if (step.kind == PipelineNormalizer::Kind::Precompiled)
      other *= static_cast<long double>(step.precompiled->longest_replacement());
  }
  for (const PipelinePreTokenizer& step : pre_tokenizer)
    if (step.kind == PipelinePreTokenizer::Kind::Common) common_pre_tokenizer.push_back(step.common);
  TextGrowth growth = text_growth(common_normalizer, common_pre_tokenizer);
  growth.factor *= other;
  growth.added *= other;
  return growth;
}

}  // namespace attn
