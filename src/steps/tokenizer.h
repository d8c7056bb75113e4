// Tokens to ids, the first step of the pipeline: each token looked up by the model's
// tokenizer (attn/tokenizer.h; how text becomes tokens is the tokenizer's, src/tokenizers/).
#ifndef ATTN_STEPS_TOKENIZER_H_
#define ATTN_STEPS_TOKENIZER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "attn/tensor.h"
#include "attn/tokenizer.h"

namespace attn {

// Ids for a batch of token lists, padded with <PAD> to the longest: (B,S).
struct TokenIds {
  Tensor ids;                                    // (B,S), the ids as doubles
  std::vector<std::vector<std::string>> tokens;  // (B,S) strings, the padding token's where padded
  std::vector<std::vector<bool>> unknown;        // true where a word was not in the vocabulary
  std::vector<std::size_t> lengths;              // tokens before padding, per batch item
};

// Looks every token up (Tokenizer::lookup); unknown words map to the unknown token. The batch
// must be one the tokenizer can take: every word found or an unknown token, and a padding
// token when the lists differ in length. The model loader checks user input for this
// (check_token_input, with the JSON path), so InternalError here, naming the word, is a bug.
TokenIds lookup_token_ids(const std::vector<std::vector<std::string>>& batch, const Tokenizer& tokenizer);

}  // namespace attn

#endif  // ATTN_STEPS_TOKENIZER_H_
