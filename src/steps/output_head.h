// The last step: from hidden states to a score (logit) for every vocabulary token. The
// softmax that turns them into probabilities is attention.h's softmax_rows.
#ifndef ATTN_STEPS_OUTPUT_HEAD_H_
#define ATTN_STEPS_OUTPUT_HEAD_H_

#include "attn/step_variants.h"
#include "attn/tensor.h"
#include "steps/projection.h"

namespace attn {

// x is (B,T,N), W is (N,V), b is (V,) or empty -> logits x @ W + b is (B,T,V).
Tensor vocabulary_logits(const Tensor& x, const Tensor& W, const Tensor& b);
// x is (B,T,N), W is (N,V), dlogits is (B,T,V) -> dx (B,T,N), dW (N,V), db (V,) when has_b.
ProjectionGradients vocabulary_logits_backward(const Tensor& x, const Tensor& W, bool has_b, const Tensor& dlogits);

// Tied to the embedding: x is (B,T,N), embedding is (V,N) -> x @ embedding^T is (B,T,V);
// with b (V,) (Marian's and BART's final_logits_bias, BERT's cls.predictions.bias)
// x @ embedding^T + b, the product rounded first, then the sum, as lm_head(x) + final_logits_bias.
Tensor tied_vocabulary_logits(const Tensor& x, const Tensor& embedding, const Tensor& b = Tensor());
// x is (B,T,N), embedding is (V,N), dlogits is (B,T,V) -> dx = dlogits @ embedding (B,T,N);
// adds the head's share of the embedding's gradient, dlogitsᵀ @ x (V,N), to dembedding
// (the lookups add theirs: one table, used twice).
Tensor tied_vocabulary_logits_backward(const Tensor& x, const Tensor& embedding, const Tensor& dlogits,
                                       Tensor& dembedding);

// A head transform before the logits (BERT's MLM head, BertPredictionHeadTransform without
// its LayerNorm): x is (B,T,N), W is (N,N), b is (N,) -> act(x @ W + b) is (B,T,N).
Tensor head_transform(const Tensor& x, const Tensor& W, const Tensor& b, Activation activation);
// x is (B,T,N), y = head_transform(x, ...) (B,T,N), dy is (B,T,N) -> dx (B,T,N), dW (N,N),
// db (N,), through the activation's derivative at x @ W + b.
ProjectionGradients head_transform_backward(const Tensor& x, const Tensor& W, const Tensor& b, Activation activation,
                                            const Tensor& y, const Tensor& dy);

}  // namespace attn

#endif  // ATTN_STEPS_OUTPUT_HEAD_H_
