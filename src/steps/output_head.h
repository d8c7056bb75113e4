// The last step: from hidden states to a score (logit) for every vocabulary token. The
// softmax that turns them into probabilities is attention.h's softmax_rows.
#ifndef ATTN_STEPS_OUTPUT_HEAD_H_
#define ATTN_STEPS_OUTPUT_HEAD_H_

#include "attn/tensor.h"

namespace attn {

// x is (B,T,N), W is (N,V), b is (V,) or empty -> logits x @ W + b is (B,T,V).
Tensor vocabulary_logits(const Tensor& x, const Tensor& W, const Tensor& b);

// Tied to the embedding: x is (B,T,N), embedding is (V,N) -> x @ embedding^T is (B,T,V).
Tensor tied_vocabulary_logits(const Tensor& x, const Tensor& embedding);

}  // namespace attn

#endif  // ATTN_STEPS_OUTPUT_HEAD_H_
