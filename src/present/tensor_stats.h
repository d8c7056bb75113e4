// A one-line summary of a tensor in the style of lovely-tensors:
//   scores (B=2,H=2,S=6,S=6) n=144 x∈[-42.93, 30.96] μ=0.2143 σ=9.817 -inf×15 (stats over 129 finite)
// shape with axis names, element count, range, mean and standard deviation, and the count
// of each kind of non-finite value when there are any. min, max, mean and std are taken
// over the finite values only (a masked score of -inf would otherwise make every statistic
// -inf or NaN); the line says so whenever some values were left out.
#ifndef ATTN_PRESENT_TENSOR_STATS_H_
#define ATTN_PRESENT_TENSOR_STATS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "attn/tensor.h"

namespace attn {

struct TensorStats {
  std::size_t count = 0;                // all elements
  std::size_t finite_count = 0;         // the ones the statistics below are taken over
  std::size_t negative_infinities = 0;  // -inf
  std::size_t positive_infinities = 0;  // +inf
  std::size_t nans = 0;
  // Over the finite values; NaN when there are none.
  double min = 0, max = 0;
  double mean = 0;
  double std = 0;  // population standard deviation (divide by n, NumPy's default ddof=0)
};

TensorStats compute_tensor_stats(const Tensor& tensor);

// `label` starts the line ("tensor" like lovely-tensors, or a trace name). Numbers are
// printed with `significant_digits` significant digits (printf's %g).
std::string format_tensor_stats(const Tensor& tensor, std::string_view label = "tensor", int significant_digits = 4);

}  // namespace attn

#endif  // ATTN_PRESENT_TENSOR_STATS_H_
