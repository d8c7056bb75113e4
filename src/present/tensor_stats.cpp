#include "present/tensor_stats.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace attn {

TensorStats compute_tensor_stats(const Tensor& tensor) {
  TensorStats stats;
  stats.count = tensor.data.size();
  double sum = 0;
  for (double v : tensor.data) {
    if (std::isnan(v)) {
      ++stats.nans;
    } else if (std::isinf(v)) {
      ++(v < 0 ? stats.negative_infinities : stats.positive_infinities);
    } else {
      if (stats.finite_count == 0 || v < stats.min) stats.min = v;
      if (stats.finite_count == 0 || v > stats.max) stats.max = v;
      sum += v;
      ++stats.finite_count;
    }
  }
  if (stats.finite_count == 0) {
    stats.min = stats.max = stats.mean = stats.std = std::numeric_limits<double>::quiet_NaN();
    return stats;
  }
  const double n = static_cast<double>(stats.finite_count);
  stats.mean = sum / n;
  // Two passes, like NumPy: the mean first, then the mean squared deviation from it.
  double squares = 0;
  for (double v : tensor.data)
    if (std::isfinite(v)) squares += (v - stats.mean) * (v - stats.mean);
  stats.std = std::sqrt(squares / n);
  return stats;
}

std::string format_tensor_stats(const Tensor& tensor, std::string_view label, int significant_digits) {
  const TensorStats s = compute_tensor_stats(tensor);
  const auto number = [&](double v) { return fmt::format("{:.{}g}", v == 0 ? 0.0 : v, significant_digits); };
  std::string line = fmt::format("{} {} n={}", label, shape_with_axes(tensor), s.count);
  if (s.count == 0) return line + " empty";
  if (s.finite_count > 0)
    line += fmt::format(" x∈[{}, {}] μ={} σ={}", number(s.min), number(s.max), number(s.mean), number(s.std));
  if (s.negative_infinities) line += fmt::format(" -inf×{}", s.negative_infinities);
  if (s.positive_infinities) line += fmt::format(" +inf×{}", s.positive_infinities);
  if (s.nans) line += fmt::format(" nan×{}", s.nans);
  if (s.finite_count == 0)
    line += " (no finite values)";
  else if (s.finite_count < s.count)
    line += fmt::format(" (stats over {} finite)", s.finite_count);
  return line;
}

}  // namespace attn
