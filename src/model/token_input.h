// Text and token input against the vocabulary: what check_token_input,
// replace_source_text and replace_target_text (attn/model_file.h) share with the loader.
#ifndef ATTN_MODEL_TOKEN_INPUT_H_
#define ATTN_MODEL_TOKEN_INPUT_H_

#include <optional>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/run_input.h"

namespace attn {

// Without a target the decoder starts from <BOS> alone, as generation does, and predicts
// the first word: sets input.target_tokens to one "<BOS>" per source sentence (a
// checkpoint's decoder_start_token_id: Marian's pad, BART's </s>). Returns false, and
// changes nothing, when the vocabulary has no <BOS>.
bool start_from_bos(const Model& model, RunInput& input);
// The token a decoder starts from: a checkpoint's decoder_start_token_id, else <BOS>.
std::optional<std::size_t> decoder_start_id(const Model& model);

// The tokens generation never writes: <PAD>, <UNK>, <BOS> (Vocabulary::never_written_ids),
// and a checkpoint's bad_words_ids of one token (Marian's pad), in increasing order.
std::vector<std::size_t> never_generated_ids(const Model& model);
// Whether writing `id` ends a decoder's text: <EOS>, or a checkpoint's eos_token_id.
bool ends_text(const Model& model, std::size_t id);

// The token lists the run looks up: the texts split as the tokenize step splits them, or
// the tokens as given, one list per sentence.
std::vector<std::vector<std::string>> token_lists(const TokenInput& input);
// The same, the texts split by `tokenizer` (Tokenizer::split): what the forward pass looks up.
std::vector<std::vector<std::string>> token_lists(const TokenInput& input, const Tokenizer& tokenizer);

}  // namespace attn

#endif  // ATTN_MODEL_TOKEN_INPUT_H_
