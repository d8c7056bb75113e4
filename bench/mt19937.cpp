// Times NumPy's legacy randn stream (np.random.seed(s); np.random.randn(n)) drawn by three
// MT19937 engines that give the same bits: the hand-made 32-bit one attn had (kept here,
// only for this comparison; it refilled its 624 words in three vectorizable loops),
// std::mt19937, and the standard template on std::uint32_t words, which
// src/core/numpy_random.h now uses. 20M values: about the weights of the base preset.
// Processor time of this thread, best of N runs.
//
// Not part of the build; compile it as a portable build and as a native one:
//   g++ -std=c++17 -O3 -ffp-contract=off bench/mt19937.cpp -o /tmp/mt_bench && /tmp/mt_bench [repeats]
//   g++ -std=c++17 -O3 -march=native -ffp-contract=off bench/mt19937.cpp -o /tmp/mt_bench_native
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>

#include "thread_time.h"

namespace {

// The hand-made engine attn used before std::mt19937: 32-bit words, refilled in three loops.
class HandMadeMt19937 {
 public:
  explicit HandMadeMt19937(std::uint32_t seed) {
    state_[0] = seed;
    for (std::uint32_t i = 1; i < kWords; ++i) state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + i;
  }
  std::uint32_t operator()() {
    if (next_ == kWords) refill();
    std::uint32_t y = state_[next_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }

 private:
  static constexpr std::size_t kWords = 624;
  void refill() {
    constexpr std::size_t kShift = 397;
    const auto twist = [](std::uint32_t upper, std::uint32_t lower, std::uint32_t far) {
      const std::uint32_t y = (upper & 0x80000000u) | (lower & 0x7fffffffu);
      return far ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    };
    std::uint32_t* mt = state_.data();
    for (std::size_t i = 0; i < kWords - kShift; ++i) mt[i] = twist(mt[i], mt[i + 1], mt[i + kShift]);
    for (std::size_t i = kWords - kShift; i < kWords - 1; ++i) mt[i] = twist(mt[i], mt[i + 1], mt[i + kShift - kWords]);
    mt[kWords - 1] = twist(mt[kWords - 1], mt[0], mt[kShift - 1]);
    next_ = 0;
  }
  std::array<std::uint32_t, kWords> state_{};
  std::size_t next_ = kWords;
};

// NumPy's legacy_gauss over any engine: the polar method, the second value kept.
template <typename Engine>
void randn(Engine& engine, std::vector<double>& out) {
  const auto sample = [&engine] {
    const std::uint32_t a = static_cast<std::uint32_t>(engine()) >> 5, b = static_cast<std::uint32_t>(engine()) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  };
  for (std::size_t i = 0; i + 1 < out.size(); i += 2) {
    double x1, x2, r2;
    do {
      x1 = 2.0 * sample() - 1.0;
      x2 = 2.0 * sample() - 1.0;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = std::sqrt(-2.0 * std::log(r2) / r2);
    out[i] = f * x2;
    out[i + 1] = f * x1;
  }
}

// MT19937 from the standard library, but on 32-bit words: std::mt19937 is the same
// template on std::uint_fast32_t, which is 64 bits on x86-64 Linux.
using Mt19937Words32 = std::mersenne_twister_engine<std::uint32_t, 32, 624, 397, 31, 0x9908b0df, 11, 0xffffffff, 7,
                                                    0x9d2c5680, 15, 0xefc60000, 18, 1812433253>;

using bench::best_seconds;

struct Times {
  double words, randn;
};

// 40M raw words and 20M randn values from `Engine`, seeded 0; the stream is left in `out`.
template <typename Engine>
Times time_engine(int repeats, std::vector<double>& out, std::uint32_t& sum) {
  Times t{};
  t.words = best_seconds(repeats, [&] {
    Engine e(0);
    sum = 0;
    for (std::size_t i = 0; i < 2 * out.size(); ++i) sum += static_cast<std::uint32_t>(e());
  });
  t.randn = best_seconds(repeats, [&] {
    Engine e(0);
    randn(e, out);
  });
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 5;
  constexpr std::size_t kValues = 20'000'000;
  std::vector<double> hand_values(kValues), std_values(kValues), words32_values(kValues);
  std::uint32_t hand_sum = 0, std_sum = 0, words32_sum = 0;
  const Times hand = time_engine<HandMadeMt19937>(repeats, hand_values, hand_sum);
  const Times standard = time_engine<std::mt19937>(repeats, std_values, std_sum);
  const Times words32 = time_engine<Mt19937Words32>(repeats, words32_values, words32_sum);
  std::printf("processor time, best of %d      40M words    20M randn\n", repeats);
  std::printf("hand-made 32-bit MT19937         %7.1f ms   %7.1f ms\n", hand.words * 1e3, hand.randn * 1e3);
  std::printf("std::mt19937 (64-bit words)      %7.1f ms   %7.1f ms\n", standard.words * 1e3, standard.randn * 1e3);
  std::printf("std::mersenne_twister_engine<uint32_t, ...> %4.1f ms   %7.1f ms\n", words32.words * 1e3,
              words32.randn * 1e3);
  if (hand_sum != std_sum || hand_sum != words32_sum || hand_values != std_values || hand_values != words32_values) {
    std::printf("the engines gave different streams\n");
    return 1;
  }
  return 0;
}
