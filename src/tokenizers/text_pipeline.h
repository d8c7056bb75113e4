// The normalizers and pre-tokenizers of the WordPiece and Unigram tokenizers: text_steps'
// kinds (Replace, NFKC, Metaspace, Split, ...) and the ones BERT's and T5's files add
// (BertNormalizer, Precompiled, BertPreTokenizer, WhitespaceSplit), as
// Hugging Face's tokenizers defines them (normalizers/bert.rs, pre_tokenizers/bert.rs,
// pre_tokenizers/whitespace.rs). Each list is applied in order, as a "Sequence" is.
#ifndef ATTN_TOKENIZERS_TEXT_PIPELINE_H_
#define ATTN_TOKENIZERS_TEXT_PIPELINE_H_

#include <memory>
#include <string>
#include <vector>

#include "tokenizers/precompiled_charsmap.h"
#include "tokenizers/text_steps.h"

namespace attn {

// BertNormalizer: in this order, clean_text (drops NUL, U+FFFD and control characters
// other than \t \n \r; any whitespace becomes " "), handle_chinese_chars (a space each side
// of a CJK ideograph), strip_accents (NFD, then marks Mn dropped), lowercase.
struct BertNormalizerOptions {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  bool strip_accents = true;
  bool lowercase = true;
};
std::string bert_normalize(const BertNormalizerOptions& options, const std::string& text);

struct PipelineNormalizer {
  enum class Kind { Common, Bert, Precompiled };
  Kind kind = Kind::Common;
  NormalizerStep common;  // Common: one of text_steps' normalizers
  BertNormalizerOptions bert;
  std::shared_ptr<const PrecompiledCharsmap> precompiled;
};
std::string run_normalizers(const std::vector<PipelineNormalizer>& steps, std::string text);

struct PipelinePreTokenizer;
// How far a text can grow through these steps (text_steps.h's TextGrowth): the common steps
// as text_growth counts them; BertNormalizer up to 16 bytes a byte (a CJK ideograph's two
// spaces, 5/3; NFD before stripping accents, counted as 4; lowercasing, 2); Precompiled up
// to its longest replacement; BertPreTokenizer and WhitespaceSplit only remove.
TextGrowth pipeline_text_growth(const std::vector<PipelineNormalizer>& normalizer,
                                const std::vector<PipelinePreTokenizer>& pre_tokenizer);

struct PipelinePreTokenizer {
  // Bert: whitespace removed, then each punctuation character (Unicode P*, or ASCII
  // punctuation) a word of its own. WhitespaceSplit: whitespace removed.
  enum class Kind { Common, Bert, WhitespaceSplit };
  Kind kind = Kind::Common;
  PreTokenizerStep common;  // Common: one of text_steps' pre-tokenizers
};
// The words of one section of text (`at_text_start` as text_steps' pre_tokenize).
std::vector<std::string> run_pre_tokenizers(const std::vector<PipelinePreTokenizer>& steps, const std::string& section,
                                            bool at_text_start);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_TEXT_PIPELINE_H_
