// Text and token input against the vocabulary: what check_token_input,
// replace_source_text and replace_target_text (attn/model_file.h) share with the loader.
#ifndef ATTN_MODEL_TOKEN_INPUT_H_
#define ATTN_MODEL_TOKEN_INPUT_H_

#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/run_input.h"

namespace attn {

// Without a target the decoder starts from <BOS> alone, as generation does, and predicts
// the first word: sets input.target_tokens to one "<BOS>" per source sentence. Returns
// false, and changes nothing, when the vocabulary has no <BOS>.
bool start_from_bos(const Model& model, RunInput& input);

// The token lists the run looks up: the texts split as the tokenize step splits them, or
// the tokens as given, one list per sentence.
std::vector<std::vector<std::string>> token_lists(const TokenInput& input);
// The same, the texts split by `tokenizer` (Tokenizer::split): what the forward pass looks up.
std::vector<std::vector<std::string>> token_lists(const TokenInput& input, const Tokenizer& tokenizer);

}  // namespace attn

#endif  // ATTN_MODEL_TOKEN_INPUT_H_
