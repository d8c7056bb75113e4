// The residual connection, the "add" of "add & norm": a sub-layer's output added back to
// its input, so that the signal always gets through and the sub-layer only learns a
// correction. (The "norm" is layer_norm.h's.)
#ifndef ATTN_STEPS_RESIDUAL_H_
#define ATTN_STEPS_RESIDUAL_H_

#include "attn/tensor.h"

namespace attn {

// x and sublayer are (B,S,N) -> x + sublayer (B,S,N), element by element.
Tensor residual_add(const Tensor& x, const Tensor& sublayer);

}  // namespace attn

#endif  // ATTN_STEPS_RESIDUAL_H_
