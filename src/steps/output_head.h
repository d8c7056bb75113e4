// The last step: from hidden states to a probability for every vocabulary token.
#ifndef ATTN_STEPS_OUTPUT_HEAD_H_
#define ATTN_STEPS_OUTPUT_HEAD_H_

#include <cstddef>
#include <vector>

#include "attn/tensor.h"

namespace attn {

// x is (B,T,N), W is (N,V), b is (V,) or empty -> logits x @ W + b is (B,T,V).
Tensor vocabulary_logits(const Tensor& x, const Tensor& W, const Tensor& b);

// Tied to the embedding: x is (B,T,N), embedding is (V,N) -> x @ embedding^T is (B,T,V).
Tensor tied_vocabulary_logits(const Tensor& x, const Tensor& embedding);

struct TokenProbability {
  std::size_t id;
  double probability;
};

// The k most probable ids of one row of V probabilities, most probable first (ties: lower id first).
std::vector<TokenProbability> top_tokens(const double* probabilities, std::size_t vocab_size, std::size_t k);

}  // namespace attn

#endif  // ATTN_STEPS_OUTPUT_HEAD_H_
