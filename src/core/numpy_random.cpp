#include "core/numpy_random.h"

#include <cmath>
#include <utility>

namespace attn {

NumpyRandom::NumpyRandom(std::uint32_t seed) : engine_(seed) {}

double NumpyRandom::random_sample() {
  // NumPy's legacy_double / mt19937_next_double.
  const std::uint32_t a = engine_() >> 5;
  const std::uint32_t b = engine_() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

double NumpyRandom::standard_normal() {
  // NumPy's legacy_gauss.
  if (has_cached_) {
    has_cached_ = false;
    return cached_;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * random_sample() - 1.0;
    x2 = 2.0 * random_sample() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  cached_ = f * x1;
  has_cached_ = true;
  return f * x2;
}

Tensor NumpyRandom::randn(const Shape& shape, const AxisNames& axes) {
  Tensor out(shape, axes);
  for (double& v : out.data) v = standard_normal();
  return out;
}

std::vector<std::size_t> NumpyRandom::permutation(std::size_t n) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  // NumPy's _shuffle_raw over np.arange(n), with random_interval(i) for each i from n-1 to 1
  // (the 32-bit branch: attn's data sets have fewer than 2^32 examples).
  for (std::size_t i = n; i-- > 1;) {
    std::uint64_t mask = i;
    for (int shift = 1; shift <= 32; shift *= 2) mask |= mask >> shift;
    std::uint64_t j = 0;
    do {
      j = engine_() & mask;
    } while (j > i);
    std::swap(order[i], order[j]);
  }
  return order;
}

}  // namespace attn
