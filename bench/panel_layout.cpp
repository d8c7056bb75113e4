// Issue 37's next step, measured before it is built: can a generated token's BF16 product
// (Llama's projections, x·Wᵀ with W stored (out, in)) read its weights at the memory's
// speed in float64? This times, on both cores, a pure read of 512 MiB of BF16 against the
// single-row product over the same bytes laid out as panels of 32 columns stored k-major
// (one 64-byte line a k: the layout attn would make once at load), each column's sum
// taken in k order as today's kernels take it. Three widenings of BF16 to float64:
//   shuffle: each 16-byte quarter of the line extracted, zero-extended and shifted (the
//            shuffle port bounds it);
//   pairs:   the line's 32-bit pairs shifted up a half (the even numbers) or masked (the
//            odd ones): float32 with no shuffle, then float32 to float64;
//   fetched: pairs, with the line 64 lines ahead fetched into the first-level cache.
// It prints each one's time and its ratio to the read (issue 37's target: 1.3).
//
// Not part of the build (AVX-512 only):
//   g++ -O3 -march=native -fopenmp bench/panel_layout.cpp -o /tmp/panel_layout && /tmp/panel_layout
// Measured on the Xeon of session 19 (family 6 model 207, 2 cores, idle): read 26.1 GB/s;
// shuffle 1.85x, pairs 1.77x, fetched 1.17x (22.4 GB/s). One thread: read 13.8 GB/s,
// fetched 1.22x. In the second-level cache, pairs runs 26 GB/s a thread and shuffle 16:
// widening is not the bound once the lines are fetched ahead.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t K = 2048, P = 8192, kMatrices = 16;  // 16 x (2048 x 8192) BF16: 512 MiB
constexpr std::size_t kAhead = 64;                         // lines fetched ahead
enum class Widening { Shuffle, Pairs, Fetched };

// Eight BF16 numbers to float64, by a shuffle.
__m512d widen_quarter(__m128i eight) {
  const __m256i bits = _mm256_slli_epi32(_mm256_cvtepu16_epi32(eight), 16);
  return _mm512_cvtps_pd(_mm256_castsi256_ps(bits));
}

// One panel (K lines of 32 BF16 numbers) times x: 32 sums, each in k order.
template <Widening kWay>
void panel_product(const std::uint16_t* panel, const double* x, double* out) {
  __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  for (std::size_t k = 0; k < K; ++k) {
    if constexpr (kWay == Widening::Fetched)
      _mm_prefetch(reinterpret_cast<const char*>(panel + 32 * (k + kAhead)), _MM_HINT_T0);
    const __m512i line = _mm512_load_si512(panel + 32 * k);
    const __m512d xk = _mm512_set1_pd(x[k]);
    if constexpr (kWay == Widening::Shuffle) {
      a0 = _mm512_fmadd_pd(xk, widen_quarter(_mm512_extracti32x4_epi32(line, 0)), a0);
      a1 = _mm512_fmadd_pd(xk, widen_quarter(_mm512_extracti32x4_epi32(line, 1)), a1);
      a2 = _mm512_fmadd_pd(xk, widen_quarter(_mm512_extracti32x4_epi32(line, 2)), a2);
      a3 = _mm512_fmadd_pd(xk, widen_quarter(_mm512_extracti32x4_epi32(line, 3)), a3);
    } else {
      const __m512 even = _mm512_castsi512_ps(_mm512_slli_epi32(line, 16));
      const __m512 odd = _mm512_castsi512_ps(_mm512_and_si512(line, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
      a0 = _mm512_fmadd_pd(xk, _mm512_cvtps_pd(_mm512_castps512_ps256(even)), a0);
      a1 = _mm512_fmadd_pd(xk, _mm512_cvtps_pd(_mm512_extractf32x8_ps(even, 1)), a1);
      a2 = _mm512_fmadd_pd(xk, _mm512_cvtps_pd(_mm512_castps512_ps256(odd)), a2);
      a3 = _mm512_fmadd_pd(xk, _mm512_cvtps_pd(_mm512_extractf32x8_ps(odd, 1)), a3);
    }
  }
  _mm512_storeu_pd(out, a0);
  _mm512_storeu_pd(out + 8, a1);
  _mm512_storeu_pd(out + 16, a2);
  _mm512_storeu_pd(out + 24, a3);
}

template <Widening kWay>
double timed_product(const std::uint16_t* w, const double* x, double* y) {
  const auto start = Clock::now();
  for (std::size_t m = 0; m < kMatrices; ++m) {
#pragma omp parallel for schedule(static)
    for (std::size_t p = 0; p < P / 32; ++p) panel_product<kWay>(w + m * K * P + p * 32 * K, x, y + m * P + p * 32);
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double timed_read(const std::uint16_t* w, std::uint64_t* total) {
  const auto start = Clock::now();
  std::uint64_t sum = 0;
#pragma omp parallel reduction(+ : sum)
  {
    __m512i acc = _mm512_setzero_si512();
#pragma omp for schedule(static)
    for (std::size_t i = 0; i < kMatrices * K * P / 32; ++i) acc = _mm512_add_epi64(acc, _mm512_load_si512(w + 32 * i));
    sum += static_cast<std::uint64_t>(_mm512_reduce_add_epi64(acc));
  }
  *total = sum;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main() {
  const std::size_t numbers = kMatrices * K * P;
  auto* w = static_cast<std::uint16_t*>(std::aligned_alloc(64, numbers * 2 + 64 * 32 * kAhead));
#pragma omp parallel for
  for (std::size_t i = 0; i < numbers + 32 * kAhead; ++i) w[i] = static_cast<std::uint16_t>(0x3f80 + (i * 7919) % 127);
  std::vector<double> x(K), y(kMatrices * P);
  for (std::size_t k = 0; k < K; ++k) x[k] = 1.0 / static_cast<double>(k + 1);
  double read = 1e9, shuffle = 1e9, pairs = 1e9, fetched = 1e9;
  std::uint64_t total = 0;
  for (int round = 0; round < 5; ++round) {  // best of five, interleaved
    read = std::min(read, timed_read(w, &total));
    shuffle = std::min(shuffle, timed_product<Widening::Shuffle>(w, x.data(), y.data()));
    pairs = std::min(pairs, timed_product<Widening::Pairs>(w, x.data(), y.data()));
    fetched = std::min(fetched, timed_product<Widening::Fetched>(w, x.data(), y.data()));
  }
  const double gb = static_cast<double>(numbers) * 2 / 1e9;
  std::printf("%d threads, %.2f GB of BF16 (checksum %llu, y[5] %g)\n", omp_get_max_threads(), gb,
              static_cast<unsigned long long>(total % 1000), y[5]);
  std::printf("  read     %6.1f ms  %5.1f GB/s\n", read * 1e3, gb / read);
  std::printf("  shuffle  %6.1f ms  %5.1f GB/s  %.2fx the read\n", shuffle * 1e3, gb / shuffle, shuffle / read);
  std::printf("  pairs    %6.1f ms  %5.1f GB/s  %.2fx the read\n", pairs * 1e3, gb / pairs, pairs / read);
  std::printf("  fetched  %6.1f ms  %5.1f GB/s  %.2fx the read\n", fetched * 1e3, gb / fetched, fetched / read);
  std::free(w);
}
