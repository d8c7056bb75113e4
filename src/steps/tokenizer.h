// Text to tokens to ids, the first steps of the pipeline.
//
// Tokenizing rule (docs/model-file.md): whitespace separates words; every punctuation
// character (. , ! ? ; : " ( ) [ ] { } and the like) is a token of its own; letters,
// digits, apostrophes, hyphens inside words and any non-ASCII character stay together;
// a special token in angle brackets (<BOS>, <PAD>) is one token.
// So "I love AI." -> I | love | AI | .   and   "J' aime l' IA" -> J' | aime | l' | IA.
#ifndef ATTN_STEPS_TOKENIZER_H_
#define ATTN_STEPS_TOKENIZER_H_

#include <cstddef>
#include <string>
#include <vector>

#include "attn/tensor.h"
#include "attn/vocabulary.h"

namespace attn {

std::vector<std::string> split_tokens(const std::string& text);

// Ids for a batch of token lists, padded with <PAD> to the longest: (B,S).
struct TokenIds {
  Tensor ids;                                    // (B,S), the ids as doubles
  std::vector<std::vector<std::string>> tokens;  // (B,S) strings, "<PAD>" where padded
  std::vector<std::vector<bool>> unknown;        // true where a word was not in the vocabulary
  std::vector<std::size_t> lengths;              // tokens before padding, per batch item
};

// Looks every token up; unknown words map to <UNK>. The batch must be one the vocabulary
// can take: every word found or an <UNK>, and a <PAD> when the lists differ in length. The
// model loader checks user input for this (check_token_input, with the JSON path), so
// InternalError here, naming the word, is a bug.
TokenIds lookup_token_ids(const std::vector<std::vector<std::string>>& batch, const Vocabulary& vocab);

}  // namespace attn

#endif  // ATTN_STEPS_TOKENIZER_H_
