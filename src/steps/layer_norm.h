// Add & norm: the residual connection and layer normalization around every sub-layer.
#ifndef ATTN_STEPS_LAYER_NORM_H_
#define ATTN_STEPS_LAYER_NORM_H_

#include "attn/tensor.h"

namespace attn {

// x and sublayer are (B,S,N) -> x + sublayer (B,S,N): the residual connection.
Tensor residual_add(const Tensor& x, const Tensor& sublayer);

// x is (B,S,N), gamma and beta are (N,) -> (B,S,N). Each position's row normalized as
// PyTorch's nn.LayerNorm does: (x - mean) / sqrt(var + eps) * gamma + beta, with the biased
// variance (divide by N, not N-1) and eps inside the square root.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps);

}  // namespace attn

#endif  // ATTN_STEPS_LAYER_NORM_H_
