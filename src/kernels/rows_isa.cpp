// The row kernels of rows_isa.h for one instruction set, chosen by ATTN_PRODUCT_ISA (0:
// SSE2, the x86-64 baseline; 1: AVX2 and FMA; 2: AVX-512F; the macro is named after the
// product kernel, which came first). Plain loops that the compiler vectorizes for the
// copy's instructions; -ffp-contract=off (ATTN_STRICT_FP_FLAGS) keeps every operation the
// same rounded one in every copy, so the three copies give the same bits (the tests check
// it), and a value never depends on its address or on whether it fell in a vector or in
// the loop's scalar remainder.
#include "kernels/rows_isa.h"

#include <cstdint>
#include <cstring>

#include "kernels/exp2_table.h"

#ifndef ATTN_PRODUCT_ISA
#error "ATTN_PRODUCT_ISA must be 0 (baseline), 1 (avx2) or 2 (avx512)"
#endif

#if ATTN_PRODUCT_ISA == 2
#define ATTN_ROWS_NAMESPACE rows_avx512
#elif ATTN_PRODUCT_ISA == 1
#define ATTN_ROWS_NAMESPACE rows_avx2
#else
#define ATTN_ROWS_NAMESPACE rows_baseline
#endif

namespace attn {
// core/tensor.cpp's NumPy pairwise sum (attn/tensor.h), declared here rather than included:
// the header's inline code must not be compiled for other instruction sets.
double pairwise_sum(const double* a, std::size_t n);
}  // namespace attn

namespace attn::ATTN_ROWS_NAMESPACE {

namespace {

constexpr double kExpLow = -708.0;
constexpr double kNegInf = -__builtin_inf();

inline double from_bits(std::uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}
inline std::uint64_t to_bits(double d) {
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

// exp(x) for -708 <= x <= 0 (x - max in a softmax row), by the method of ARM's
// optimized-routines exp, which glibc's exp uses: x = k ln2/128 + r with |r| <= ln2/256,
// exp(x) = 2^(k/128) exp(r), 2^(i/128) from a table (exp2_table.h) and exp(r) - 1 from
// its Taylor polynomial to r^5 (the first term left out, r^6/720 < 6e-19, is under 0.003
// ulp). No branch and no special case: the range above keeps 2^(k/128) a normal number.
// Measured over tests/kernels/row_kernels_test.cpp's sweep of [-708, 0] (1.2 million
// points): at most 0.509 ulp from the exact value (glibc's std::exp: 0.505), and at most
// one ulp from std::exp.
inline double exp_in_range(double x) {
  constexpr double kInvLn2N = 0x1.71547652b82fep7;      // 128 / ln 2
  constexpr double kShift = 0x1.8p52;                   // rounds to an integer in the low bits
  constexpr double kNegLn2HiN = -0x1.62e42fefa0000p-8;  // -ln2/128, 36 bits: k · hi exact
  constexpr double kNegLn2LoN = -0x1.cf79abc9e3b3ap-47;
  double kd = x * kInvLn2N + kShift;
  const std::uint64_t ki = to_bits(kd);
  kd -= kShift;
  const double r = x + kd * kNegLn2HiN + kd * kNegLn2LoN;
  const std::uint64_t i = 2 * (ki % 128);
  const double tail = from_bits(kExp2Table[i]);
  // 2^(k/128) · 2^64: near x = -708 the scale is 2^-1021 and scale · poly would be a
  // subnormal, rounded to fewer bits (0.75 ulp measured); scaled up, every operation is on
  // normal numbers, and the product by 2^-64 at the end is exact (the result is normal).
  const double scale = from_bits(kExp2Table[i + 1] + (ki << 45) + (std::uint64_t{64} << 52));
  const double r2 = r * r;
  const double poly = tail + r + r2 * (0.5 + r * (1.0 / 6)) + r2 * r2 * (1.0 / 24 + r * (1.0 / 120));
  return (scale + scale * poly) * 0x1p-64;
}

// The largest of x[0..n), n >= 1: exact in any order; eight running maxima, a shape the
// compiler turns into vector max instructions.
double row_max(const double* x, std::size_t n) {
  double m[8] = {kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf, kNegInf};
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (std::size_t l = 0; l < 8; ++l) m[l] = m[l] > x[j + l] ? m[l] : x[j + l];
  for (; j < n; ++j) m[0] = m[0] > x[j] ? m[0] : x[j];
  double max = m[0];
  for (std::size_t l = 1; l < 8; ++l) max = max > m[l] ? max : m[l];
  return max;
}

}  // namespace

void exp_shifted(const double* x, double shift, double* y, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    const double d = x[j] - shift;
    const double e = exp_in_range(d < kExpLow ? kExpLow : d);
    y[j] = d < kExpLow ? 0.0 : (d == d ? e : d);  // NaN stays NaN
  }
}

std::size_t softmax_rows(const double* in, double* out, std::size_t rows, std::size_t T) {
  std::size_t masked = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const double* x = in + r * T;
    double* y = out + r * T;
    const double max = row_max(x, T);
    if (max == kNegInf) {  // every key masked: zero weights, as the reference
      for (std::size_t j = 0; j < T; ++j) y[j] = 0.0;
      ++masked;
      continue;
    }
    exp_shifted(x, max, y, T);
    const double sum = pairwise_sum(y, T);
    for (std::size_t j = 0; j < T; ++j) y[j] /= sum;
  }
  return masked;
}

void relu(double* h, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) h[i] = h[i] > 0 ? h[i] : 0.0;
}

}  // namespace attn::ATTN_ROWS_NAMESPACE
