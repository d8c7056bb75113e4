// NumPy's legacy random stream, reproduced bit for bit:
//   np.random.seed(seed); np.random.randn(...)
// MT19937 seeded with init_genrand (NumPy's mt19937_seed for an integer seed), 53-bit
// doubles from two 32-bit draws, and the polar Box-Muller method that keeps its second
// value for the next call. This file is compiled with -ffp-contract=off: a fused
// multiply-add in x1*x1 + x2*x2 changes which pairs are rejected and so every later value.
#ifndef ATTN_CORE_NUMPY_RANDOM_H_
#define ATTN_CORE_NUMPY_RANDOM_H_

#include <array>
#include <cstdint>
#include <vector>

#include "attn/tensor.h"

namespace attn {

// MT19937 on 32-bit words, as NumPy's mt19937.c. (std::mt19937 is the same generator
// but keeps its state in 64-bit words and draws one word at a time; this one refills all
// 624 words in three simple loops that the compiler vectorizes, so drawing the weights of
// a paper-sized model takes half the time.)
class Mt19937 {
 public:
  explicit Mt19937(std::uint32_t seed);
  std::uint32_t operator()() {
    if (next_ == kWords) refill();
    std::uint32_t y = state_[next_++];
    // tempering
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }

 private:
  static constexpr std::size_t kWords = 624;
  void refill();
  std::array<std::uint32_t, kWords> state_{};
  std::size_t next_ = kWords;
};

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
