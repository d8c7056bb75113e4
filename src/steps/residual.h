// The residual connection, the "add" of "add & norm": a sub-layer's output added back to
// its input, so that the signal always gets through and the sub-layer only learns a
// correction. (The "norm" is layer_norm.h's.)
#ifndef ATTN_STEPS_RESIDUAL_H_
#define ATTN_STEPS_RESIDUAL_H_

#include "attn/tensor.h"

namespace attn {

// x and sublayer are (B,S,N) -> x + sublayer (B,S,N), element by element.
Tensor residual_add(const Tensor& x, const Tensor& sublayer);
// dy is (B,S,N) -> dL/dx = dL/dsublayer = dy: an addition passes its gradient to both
// terms unchanged. So the gradient reaches a layer's input twice, through the sub-layer
// and straight along the residual, and the two are added (gradient_sum).
Tensor residual_add_backward(const Tensor& dy);
// a and b are two gradients of the same tensor (B,S,N), from the two places it was used
// -> their sum, element by element: the chain rule's sum over paths.
Tensor gradient_sum(const Tensor& a, const Tensor& b);

}  // namespace attn

#endif  // ATTN_STEPS_RESIDUAL_H_
