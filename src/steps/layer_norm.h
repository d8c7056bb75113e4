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

}  // namespace attn

#endif  // ATTN_STEPS_LAYER_NORM_H_
