// The position-wise feed-forward network: FFN(x) = act(x W_1 + b_1) W_2 + b_2, the same
// two projections (projection.h) applied to every position on its own.
#ifndef ATTN_STEPS_FEED_FORWARD_H_
#define ATTN_STEPS_FEED_FORWARD_H_

#include "attn/step_variants.h"
#include "attn/tensor.h"
#include "steps/projection.h"

namespace attn {

// x -> ReLU max(0, x), GELU x * Phi(x) with the exact erf form (PyTorch's default "gelu"),
// GELU's tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (GPT-2's,
// PyTorch's approximate="tanh"; also GeGLU's gate's), or SiLU x * sigmoid(x) (Marian's swish,
// and SwiGLU's gate).
double activate(double x, Activation activation);
// x -> act'(x): ReLU's is 1 above 0 and 0 at or below it (0 at exactly 0, as PyTorch);
// GELU's is Phi(x) + x phi(x) = 0.5 (1 + erf(x / sqrt 2)) + x exp(-x^2 / 2) / sqrt(2 pi);
// the tanh form's, with u = sqrt(2/pi) (x + 0.044715 x^3) and t = tanh(u),
// 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2); SiLU's is
// s (1 + x (1 - s)) with s = sigmoid(x).
double activate_derivative(double x, Activation activation);

// x is (B,S,N), W_1 is (N,F), b_1 is (F,) -> act(x @ W_1 + b_1) is (B,S,F): activate() on
// every element below kExactMaxElements of them, kernels/rows.h's vectorized activation
// (within the bounds it documents) on the larger tensors; so is gated_hidden's gate.
Tensor feed_forward_hidden(const Tensor& x, const Tensor& W_1, const Tensor& b_1, Activation activation);
// x is (B,S,N), W_1 is (N,F), b_1 is (F,) or empty, hidden (B,S,F) is the forward's result,
// dhidden is (B,S,F) -> dx (B,S,N), dW_1 (N,F), db_1 (F,): the activation's derivative at
// the pre-activation a = x @ W_1 + b_1 times dhidden, then the projection's backward. ReLU
// reads it from hidden (a > 0 exactly where hidden > 0); GELU computes a again.
ProjectionGradients feed_forward_hidden_backward(const Tensor& x, const Tensor& W_1, const Tensor& b_1,
                                                 Activation activation, const Tensor& hidden, const Tensor& dhidden);

// SwiGLU (Llama's feed-forward): x is (B,S,N), W_1 (the gate) and W_3 (the up projection)
// are (N,F) -> silu(x @ W_1) ⊙ (x @ W_3) is (B,S,F), silu(a) = a * sigmoid(a).
Tensor swiglu_hidden(const Tensor& x, const Tensor& W_1, const Tensor& W_3);
// The gradients of hidden = swiglu_hidden(x, W_1, W_3), given dhidden (B,S,F): with the gate
// a = x @ W_1 and the up u = x @ W_3 computed again, da = dhidden ⊙ u ⊙ silu'(a) and
// du = dhidden ⊙ silu(a); then each projection's backward, dx their sum.
struct SwigluGradients {
  Tensor dx;    // (B,S,N)
  Tensor dW_1;  // (N,F)
  Tensor dW_3;  // (N,F)
};
SwigluGradients swiglu_hidden_backward(const Tensor& x, const Tensor& W_1, const Tensor& W_3, const Tensor& dhidden);

// A gated feed-forward's hidden layer with the gate's activation: SwiGLU's silu, or GeGLU's
// GELU in its tanh form (Gemma's gelu_pytorch_tanh): x is (B,S,N), W_1 (the gate) and W_3
// (the up projection) are (N,F) -> act(x @ W_1) ⊙ (x @ W_3) is (B,S,F).
Tensor gated_hidden(const Tensor& x, const Tensor& W_1, const Tensor& W_3, Activation activation);
// Its gradients, as swiglu_hidden_backward's with act and act' of `activation`.
SwigluGradients gated_hidden_backward(const Tensor& x, const Tensor& W_1, const Tensor& W_3, Activation activation,
                                      const Tensor& dhidden);

// hidden is (B,S,F), W_2 is (F,N), b_2 is (N,) -> hidden @ W_2 + b_2 is (B,S,N).
Tensor feed_forward_output(const Tensor& hidden, const Tensor& W_2, const Tensor& b_2);
// hidden is (B,S,F), W_2 is (F,N), doutput is (B,S,N) -> dhidden (B,S,F), dW_2 (F,N), db_2 (N,).
ProjectionGradients feed_forward_output_backward(const Tensor& hidden, const Tensor& W_2, bool has_b_2,
                                                 const Tensor& doutput);

}  // namespace attn

#endif  // ATTN_STEPS_FEED_FORWARD_H_
