#include "steps/feed_forward.h"

#include <cmath>

#include "kernels/parallel.h"
#include "steps/projection.h"

namespace attn {

double activate(double x, Activation activation) {
  // x -> act(x)
  if (activation == Activation::ReLU) return x > 0 ? x : 0.0;
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

Tensor feed_forward_hidden(const Tensor& x, const Tensor& W_1, const Tensor& b_1, Activation activation) {
  // x is (B,S,N), W_1 is (N,F), b_1 is (F,) -> (B,S,F)
  Tensor hidden = linear_projection(x, W_1, b_1, "F");
  // then the activation, element by element
  double* h = hidden.data.data();
  if (activation == Activation::ReLU) {
    // The same max(0, x) as activate(), written out so that the loop vectorizes.
    for (std::size_t i = 0; i < hidden.size(); ++i) h[i] = h[i] > 0 ? h[i] : 0.0;
  } else {
    // GELU's erf is compute-bound: a large tensor is shared between the threads.
    for_each_range(hidden.size(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) h[i] = activate(h[i], activation);
    });
  }
  return hidden;
}

Tensor feed_forward_output(const Tensor& hidden, const Tensor& W_2, const Tensor& b_2) {
  // hidden is (B,S,F), W_2 is (F,N), b_2 is (N,) -> (B,S,N)
  return linear_projection(hidden, W_2, b_2, "N");
}

}  // namespace attn
