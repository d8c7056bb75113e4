// Central differences, to check a backward function against its forward: the gradient of
// L = Σ f(x) ⊙ dy with respect to x, element by element,
//   dL/dx_i ≈ (L(x + h e_i) - L(x - h e_i)) / 2h,
// whose error is O(h²) plus rounding of order 1e-16 / h: about 1e-10 of the gradient for h
// near 1e-5 on values of order 1. Tests only; the product never differentiates this way.
#ifndef ATTN_TESTS_GRADIENT_CHECK_H_
#define ATTN_TESTS_GRADIENT_CHECK_H_

#include <algorithm>
#include <cmath>
#include <functional>

#include "attn/tensor.h"

namespace attn_test {

// Σ a ⊙ b
inline double dot(const attn::Tensor& a, const attn::Tensor& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a.data[i] * b.data[i];
  return s;
}

// The numeric gradient of L(x) = Σ f(x) ⊙ dy.
inline attn::Tensor numeric_gradient(const std::function<attn::Tensor(const attn::Tensor&)>& f, attn::Tensor x,
                                     const attn::Tensor& dy, double h = 1e-5) {
  attn::Tensor g(x.shape, x.axes);
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x.data[i];
    x.data[i] = keep + h;
    const double up = dot(f(x), dy);
    x.data[i] = keep - h;
    const double down = dot(f(x), dy);
    x.data[i] = keep;
    g.data[i] = (up - down) / (2 * h);
  }
  return g;
}

// The largest |actual - expected| over the largest |expected| (1 when expected is all 0):
// the error relative to the tensor's scale, as the reference tests measure it.
inline double relative_error(const attn::Tensor& actual, const attn::Tensor& expected) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    worst = std::max(worst, std::fabs(actual.data.at(i) - expected.data[i]));
    scale = std::max(scale, std::fabs(expected.data[i]));
  }
  return actual.size() == expected.size() ? worst / (scale > 0 ? scale : 1.0) : HUGE_VAL;
}

// Smooth, distinct values of order 1: sin at spread-out points.
inline attn::Tensor wave_tensor(attn::Shape shape, attn::AxisNames axes, double phase) {
  attn::Tensor t(std::move(shape), std::move(axes));
  for (std::size_t i = 0; i < t.size(); ++i) t.data[i] = std::sin(0.7 * static_cast<double>(i) + phase) * 1.3;
  return t;
}

}  // namespace attn_test

#endif  // ATTN_TESTS_GRADIENT_CHECK_H_
