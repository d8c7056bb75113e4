// Times attn's softmax_rows at the base preset's size: one layer's attention weights,
// (B=1, H=8, S=512, T=512), 2M scores. Two kinds of scores: a randn model's (spread over
// thousands, so most weights fall below exp(-708) and come out as 0) and a trained
// model's (spread over a few units, every exp computed in full).
//
// Not part of the build; compile it against a build folder's libraries and run it:
//   b=build; g++ -std=c++17 -O2 -march=native -fopenmp bench/softmax.cpp -o /tmp/softmax_bench \
//     -I$b/include-roots/steps -I$b/include-roots/core-public \
//     $b/src/steps/libattn_steps.a $b/src/kernels/libattn_kernels.a $b/src/core/libattn_core.a -lfmt
//   OMP_WAIT_POLICY=PASSIVE /tmp/softmax_bench [repeats]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "attn/tensor.h"
#include "steps/attention.h"

namespace {

// Normal(0, sigma) numbers from a fixed linear congruential stream (Box-Muller).
void fill_normal(attn::Tensor& t, double sigma) {
  unsigned long long state = 12345;
  auto uniform = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (static_cast<double>(state >> 11) + 0.5) / 9007199254740992.0;
  };
  for (double& v : t.data) v = sigma * std::sqrt(-2.0 * std::log(uniform())) * std::cos(6.283185307179586 * uniform());
}

void time_softmax(const char* what, double sigma, int repeats) {
  attn::Tensor scores({1, 8, 512, 512}, {"B", "H", "S", "S"});
  fill_normal(scores, sigma);
  std::vector<double> ms;
  double checksum = 0;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const attn::Tensor w = attn::softmax_rows(scores);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    checksum += w.data[12345];
  }
  std::sort(ms.begin(), ms.end());
  std::printf("%-24s min %6.2f ms  median %6.2f ms  (%d runs, checksum %.6g)\n", what, ms.front(), ms[ms.size() / 2],
              repeats, checksum);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 50;
  time_softmax("randn model (sigma 1000)", 1000.0, repeats);
  time_softmax("trained (sigma 3)", 3.0, repeats);
  return 0;
}
