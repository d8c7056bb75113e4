#include "steps/feed_forward.h"

#include <cmath>

#include "kernels/parallel.h"
#include "steps/attention.h"

namespace attn {

double activate(double x, Activation activation) {
  if (activation == Activation::ReLU) return x > 0 ? x : 0.0;
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

Tensor feed_forward_hidden(const Tensor& x, const Tensor& W_1, const Tensor& b_1, Activation activation) {
  // (B,S,N) @ (N,F) -> (B,S,F), then the activation element by element
  Tensor hidden = linear_projection(x, W_1, b_1, "F");
  double* h = hidden.data.data();
  const std::size_t n = hidden.size();
  if (activation == Activation::ReLU) {
    // The same max(0, x) as activate(), written out so that the loop vectorizes.
    for (std::size_t i = 0; i < n; ++i) h[i] = h[i] > 0 ? h[i] : 0.0;
  } else {
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)  // erf: compute-bound
    for (std::size_t i = 0; i < n; ++i) h[i] = activate(h[i], activation);
  }
  return hidden;
}

Tensor feed_forward_output(const Tensor& hidden, const Tensor& W_2, const Tensor& b_2) {
  // (B,S,F) @ (F,N) -> (B,S,N)
  return linear_projection(hidden, W_2, b_2, "N");
}

}  // namespace attn
