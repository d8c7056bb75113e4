#include "steps/output_head.h"

#include "steps/projection.h"

namespace attn {

Tensor vocabulary_logits(const Tensor& x, const Tensor& W, const Tensor& b) {
  // x is (B,T,N), W is (N,V), b is (V,) -> (B,T,V)
  return linear_projection(x, W, b, "V");
}

Tensor tied_vocabulary_logits(const Tensor& x, const Tensor& embedding) {
  // x is (B,T,N), embedding is (V,N) -> embedding^T is (N,V) -> x @ embedding^T is (B,T,V)
  return linear_projection(x, transposed(embedding, {1, 0}), Tensor(), "V");
}

}  // namespace attn
