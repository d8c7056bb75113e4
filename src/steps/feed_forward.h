// The position-wise feed-forward network: FFN(x) = act(x W_1 + b_1) W_2 + b_2, the same
// two projections (projection.h) applied to every position on its own.
#ifndef ATTN_STEPS_FEED_FORWARD_H_
#define ATTN_STEPS_FEED_FORWARD_H_

#include "attn/step_variants.h"
#include "attn/tensor.h"

namespace attn {

// x -> ReLU max(0, x), or GELU x * Phi(x) with the exact erf form (PyTorch's default "gelu").
double activate(double x, Activation activation);

// x is (B,S,N), W_1 is (N,F), b_1 is (F,) -> act(x @ W_1 + b_1) is (B,S,F).
Tensor feed_forward_hidden(const Tensor& x, const Tensor& W_1, const Tensor& b_1, Activation activation);

// hidden is (B,S,F), W_2 is (F,N), b_2 is (N,) -> hidden @ W_2 + b_2 is (B,S,N).
Tensor feed_forward_output(const Tensor& hidden, const Tensor& W_2, const Tensor& b_2);

}  // namespace attn

#endif  // ATTN_STEPS_FEED_FORWARD_H_
