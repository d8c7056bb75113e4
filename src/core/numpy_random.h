// NumPy's legacy random stream, reproduced bit for bit:
//   np.random.seed(seed); np.random.randn(...)
// MT19937 seeded with init_genrand (NumPy's mt19937_seed for an integer seed), 53-bit
// doubles from two 32-bit draws, and the polar Box-Muller method that keeps its second
// value for the next call. This file is compiled with -ffp-contract=off: a fused
// multiply-add in x1*x1 + x2*x2 changes which pairs are rejected and so every later value.
#ifndef ATTN_CORE_NUMPY_RANDOM_H_
#define ATTN_CORE_NUMPY_RANDOM_H_

#include <cstdint>
#include <random>
#include <vector>

#include "attn/tensor.h"

namespace attn {

// MT19937 on 32-bit words, as NumPy's mt19937.c: the standard library's engine with
// std::mt19937's parameters, but std::uint32_t words. std::mt19937 itself keeps its state
// in std::uint_fast32_t, 64 bits on x86-64 Linux, and its refill then vectorizes only on
// AVX2: in a baseline x86-64 build it drew NumPy's randn stream 1.7x slower than this one,
// which runs as fast as the hand-made engine it replaced (bench/mt19937.cpp). Seeded with
// an integer it runs init_genrand, as NumPy's mt19937_seed does.
using Mt19937 = std::mersenne_twister_engine<std::uint32_t, 32, 624, 397, 31, 0x9908b0dfu, 11, 0xffffffffu, 7,
                                             0x9d2c5680u, 15, 0xefc60000u, 18, 1812433253u>;

class NumpyRandom {
 public:
  explicit NumpyRandom(std::uint32_t seed);

  // np.random.random_sample(): uniform in [0, 1) with 53 random bits.
  double random_sample();
  // One value of np.random.randn() / standard_normal() in the legacy stream.
  double standard_normal();
  // np.random.randn(*shape), filled in C order.
  Tensor randn(const Shape& shape, const AxisNames& axes = {});
  // One value of np.random.uniform(low, high): low + (high - low) * random_sample().
  double uniform(double low, double high) { return low + (high - low) * random_sample(); }
  // np.random.permutation(n): 0 .. n-1 shuffled by the legacy Fisher-Yates (from the last
  // place down, each swap partner drawn as NumPy's random_interval draws it: 32-bit words
  // masked to the smallest power of two above, redrawn until in range).
  std::vector<std::size_t> permutation(std::size_t n);

 private:
  Mt19937 engine_;  // seeded by init_genrand, as NumPy's mt19937_seed
  bool has_cached_ = false;
  double cached_ = 0.0;
};

}  // namespace attn

#endif  // ATTN_CORE_NUMPY_RANDOM_H_
