// Layer normalization, the "norm" of "add & norm" around every sub-layer. (The "add", the
// residual connection, is residual.h's.)
#ifndef ATTN_STEPS_LAYER_NORM_H_
#define ATTN_STEPS_LAYER_NORM_H_

#include "attn/tensor.h"

namespace attn {

// x is (B,S,N), gamma and beta are (N,) -> (B,S,N). Each position's row normalized as
// PyTorch's nn.LayerNorm does: (x - mean) / sqrt(var + eps) * gamma + beta, with the biased
// variance (divide by N, not N-1) and eps inside the square root.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps);

// The gradients of y = layer_norm(x, gamma, beta, eps), given dy.
struct LayerNormGradients {
  Tensor dx;      // (B,S,N)
  Tensor dgamma;  // (N,) = Σ over positions of dy ⊙ x̂
  Tensor dbeta;   // (N,) = Σ over positions of dy
};
// x and dy are (B,S,N), gamma is (N,) -> the gradients. Per row, with x̂ = (x - mean) / σ,
// σ = sqrt(var + eps) as the forward computes them and g = dy ⊙ gamma:
//   dx = (g - mean(g) - x̂ · mean(g ⊙ x̂)) / σ
// (the mean and the variance depend on every element of the row, hence the two means).
LayerNormGradients layer_norm_backward(const Tensor& x, const Tensor& gamma, double eps, const Tensor& dy);

// x is (B,S,N), gamma is (N,) -> (B,S,N). Root-mean-square normalization (Llama's RMSNorm):
// x / sqrt(mean(x²) + eps) · gamma. No mean is subtracted and there is no beta.
Tensor rms_norm(const Tensor& x, const Tensor& gamma, double eps);

// The gradients of y = rms_norm(x, gamma, eps), given dy.
struct RmsNormGradients {
  Tensor dx;      // (B,S,N)
  Tensor dgamma;  // (N,) = Σ over positions of dy ⊙ x̂
};
// x and dy are (B,S,N), gamma is (N,) -> the gradients. Per row, with r = 1 / sqrt(mean(x²) +
// eps), x̂ = x · r and g = dy ⊙ gamma:
//   dx = r · (g - x̂ · mean(g ⊙ x̂))
// (r depends on every element of the row, hence the one mean; no mean(g): nothing was
// subtracted).
RmsNormGradients rms_norm_backward(const Tensor& x, const Tensor& gamma, double eps, const Tensor& dy);

// Gemma's RMSNorm: x is (B,S,N), gamma is (N,) -> (B,S,N), x / sqrt(mean(x²) + eps) · (1 +
// gamma), the gain 1 + gamma computed first, as GemmaRMSNorm's output * (1.0 + weight).
Tensor rms_norm_plus_one(const Tensor& x, const Tensor& gamma, double eps);
// Its gradients: rms_norm_backward's with the gain 1 + gamma (d(1 + gamma)/dgamma = 1, so
// dgamma is the gain's gradient).
RmsNormGradients rms_norm_plus_one_backward(const Tensor& x, const Tensor& gamma, double eps, const Tensor& dy);

// QK-norm (Qwen3's q_norm and k_norm): x is (B,H,S,d), the queries or the keys after the
// head split (before RoPE), gamma is (d,) -> (B,H,S,d). Every head's row of d numbers is
// divided by its root mean square and scaled by gamma, as rms_norm does to a position's row:
// x / sqrt(mean(x²) + eps) · gamma, one gamma shared by every head.
Tensor qk_norm(const Tensor& x, const Tensor& gamma, double eps);
// x and dy are (B,H,S,d), gamma is (d,) -> dx (B,H,S,d) and dgamma (d,), summed over every
// head and position: rms_norm_backward's formulas on each head's row.
RmsNormGradients qk_norm_backward(const Tensor& x, const Tensor& gamma, double eps, const Tensor& dy);

}  // namespace attn

#endif  // ATTN_STEPS_LAYER_NORM_H_
