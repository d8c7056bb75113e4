// The normalizer, pre-tokenizer, post-processor and decoder of a tokenizer.json, read into
// attn's steps; a kind attn does not know is refused by name.
#ifndef ATTN_TOKENIZERS_PIPELINE_JSON_H_
#define ATTN_TOKENIZERS_PIPELINE_JSON_H_

#include <cstddef>
#include <vector>

#include "tokenizers/bpe_model.h"
#include "tokenizers/json_fields.h"
#include "tokenizers/text_steps.h"

namespace attn {

std::vector<NormalizerStep> read_normalizer(const JsonField& field);
std::vector<PreTokenizerStep> read_pre_tokenizer(const JsonField& field);
std::vector<DecoderStep> read_decoder(const JsonField& field);
// The ids a post-processor puts before and after a single text.
void read_post_processor(const JsonField& field, const BpeVocabulary& vocabulary, std::vector<std::size_t>& prefix,
                         std::vector<std::size_t>& suffix);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_PIPELINE_JSON_H_
