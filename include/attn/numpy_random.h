// NumPy's legacy random stream, reproduced bit for bit:
//   np.random.seed(seed); np.random.randn(...)
// MT19937 seeded with init_genrand (NumPy's mt19937_seed for an integer seed), 53-bit
// doubles from two 32-bit draws, and the polar Box-Muller method that keeps its second
// value for the next call. This file is compiled with -ffp-contract=off: a fused
// multiply-add in x1*x1 + x2*x2 changes which pairs are rejected and so every later value.
#ifndef ATTN_NUMPY_RANDOM_H_
#define ATTN_NUMPY_RANDOM_H_

#include <cstdint>
#include <random>

#include "attn/tensor.h"

namespace attn {

class NumpyRandom {
 public:
  explicit NumpyRandom(std::uint32_t seed);

  // np.random.random_sample(): uniform in [0, 1) with 53 random bits.
  double random_sample();
  // One value of np.random.randn() / standard_normal() in the legacy stream.
  double standard_normal();
  // np.random.randn(*shape), filled in C order.
  Tensor randn(const Shape& shape, const AxisNames& axes = {});

 private:
  std::mt19937 engine_;  // std::mt19937(seed) is init_genrand, as NumPy's mt19937_seed
  bool has_cached_ = false;
  double cached_ = 0.0;
};

}  // namespace attn

#endif  // ATTN_NUMPY_RANDOM_H_
