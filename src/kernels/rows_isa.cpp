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
#include <type_traits>

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
//
// 2^(k/128) is made times 2^bias (bias_bits = bias << 52) and the result times 2^-bias:
// near x = -708 the scale is 2^-1021 and scale · poly would be a subnormal, rounded to
// fewer bits (0.75 ulp measured); scaled up by 2^64, every operation is on normal numbers,
// and the product by 2^-64 at the end is exact (the result is normal). Above 0 (exp_any)
// it is scaled down by 2^-64 instead, so that 2^(k/128) stays finite up to x = 710.
inline double exp_scaled(double x, std::uint64_t bias_bits, double unbias) {
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
  const double scale = from_bits(kExp2Table[i + 1] + (ki << 45) + bias_bits);
  const double r2 = r * r;
  const double poly = tail + r + r2 * (0.5 + r * (1.0 / 6)) + r2 * r2 * (1.0 / 24 + r * (1.0 / 120));
  return (scale + scale * poly) * unbias;
}

inline double exp_in_range(double x) { return exp_scaled(x, std::uint64_t{64} << 52, 0x1p-64); }

// exp(x) for any x: clamped to [-708, 710] first, so exp(-708) = 3.3e-308 stands for
// every smaller result (never a subnormal: see exp_in_range) and everything above 709.78
// overflows to inf, as std::exp; NaN stays NaN (the clamp's comparisons are false for it).
// Within 1 ulp of std::exp on [-708, 709.78] (row_kernels_test.cpp's activation sweep).
inline double exp_any(double x) {
  const double c = x < kExpLow ? kExpLow : (x > 710.0 ? 710.0 : x);
  const bool up = c > 0;
  return exp_scaled(c, up ? std::uint64_t{0} - (std::uint64_t{64} << 52) : std::uint64_t{64} << 52,
                    up ? 0x1p64 : 0x1p-64);
}

// erf's rational approximations, FDLIBM's (Sun Microsystems, 1993, freely distributable;
// glibc's erf is the same code): erf(a) for a = |z| in four pieces, each a rational
// function N(t) / D(t) of its own t. Row 0, a < 0.84375: erf = z + z N/D, t = z^2 (below
// 2^-28, t = 0 and N/D = 2/sqrt(pi) - 1); row 1, a < 1.25: erf = erx + N/D, t = a - 1;
// rows 2 (a < 1/0.35) and 3: erfc(a) = exp(-a^2 - 0.5625 + N/D) / a, t = 1 / a^2. The
// pieces with fewer terms are padded with zeros, which leave their sums as they were.
constexpr double kErfNumerator[4][8] = {
    {0x1.06eba8214db68p-3, -0x1.4cd7d691cb913p-2, -0x1.d2a51dbd7194fp-6, -0x1.7a291236668e4p-8, -0x1.8ead6120016acp-16,
     0, 0, 0},
    {-0x1.359b8bef77538p-9, 0x1.a8d00ad92b34dp-2, -0x1.7d240fbb8c3f1p-2, 0x1.45fca805120e4p-2, -0x1.c63983d3e28ecp-4,
     0x1.22a36599795ebp-5, -0x1.1bf380a96073fp-9, 0},
    {-0x1.43412600d6435p-7, -0x1.63416e4ba7360p-1, -0x1.51e0441b0e726p3, -0x1.f300ae4cba38dp5, -0x1.44cb184282266p7,
     -0x1.7135cebccabb2p7, -0x1.4526557e4d2f2p6, -0x1.3a0efc69ac25cp3},
    {-0x1.4341239e86f4ap-7, -0x1.993ba70c285dep-1, -0x1.1c209555f995ap4, -0x1.4145d43c5ed98p7, -0x1.3ec881375f228p9,
     -0x1.004616a2e5992p10, -0x1.e384e9bdc383fp8, 0}};
constexpr double kErfDenominator[4][9] = {
    {1, 0x1.97779cddadc09p-2, 0x1.0a54c5536cebap-4, 0x1.4d022c4d36b0fp-8, 0x1.15dc9221c1a10p-13, -0x1.09c4342a26120p-18,
     0, 0, 0},
    {1, 0x1.b3e6618eee323p-4, 0x1.14af092eb6f33p-1, 0x1.2635cd99fe9a7p-4, 0x1.02660e763351fp-3, 0x1.bedc26b51dd1cp-7,
     0x1.88b545735151dp-7, 0, 0},
    {1, 0x1.3a6b9bd707687p4, 0x1.1350c526ae721p7, 0x1.b290dd58a1a71p8, 0x1.42b1921ec2868p9, 0x1.ad02157700314p8,
     0x1.b28a3ee48ae2cp6, 0x1.a47ef8e484a93p2, -0x1.eeff2ee749a62p-5},
    {1, 0x1.e568b261d5190p4, 0x1.45cae221b9f0ap8, 0x1.802eb189d5118p10, 0x1.8ffb7688c246ap11, 0x1.3f219cedf3be6p11,
     0x1.da874e79fe763p8, -0x1.670e242712d62p4, 0}};

template <int k>
using K = std::integral_constant<int, k>;

// Row 0, 1, 2 or 3's coefficient k by the pieces' comparisons: constants folded into the
// selects, never a load from an address chosen per element (the vectorizer refuses those).
template <const auto& table, int k>
inline double pick(bool in0, bool in1, bool in2) {
  constexpr double c0 = table[0][k], c1 = table[1][k], c2 = table[2][k], c3 = table[3][k];
  return in0 ? c0 : (in1 ? c1 : (in2 ? c2 : c3));
}

// N(t) / D(t) of the piece the comparisons pick (tiny: a < 2^-28, in0: a < 0.84375, in1:
// a < 1.25, in2: a < 1/0.35): glibc's sums, in its order, with every piece's terms.
inline double erf_ratio(double t, bool tiny, bool in0, bool in1, bool in2) {
  const auto n = [&](auto k) { return pick<kErfNumerator, decltype(k)::value>(in0, in1, in2); };
  const auto d = [&](auto k) { return pick<kErfDenominator, decltype(k)::value>(in0, in1, in2); };
  const double n0 = tiny ? 0x1.06eba8214db69p-3 : n(K<0>());  // 2/sqrt(pi) - 1, with t = 0
  const double t2 = t * t, t4 = t2 * t2, t6 = t4 * t2, t8 = t4 * t4;
  const double num = (n0 + t * n(K<1>())) + t2 * (n(K<2>()) + t * n(K<3>())) + t4 * (n(K<4>()) + t * n(K<5>())) +
                     t6 * (n(K<6>()) + t * n(K<7>()));
  const double den = (1.0 + t * d(K<1>())) + t2 * (d(K<2>()) + t * d(K<3>())) + t4 * (d(K<4>()) + t * d(K<5>())) +
                     t6 * (d(K<6>()) + t * d(K<7>())) + t8 * d(K<8>());
  return num / den;
}

// erfc(a) for 1.25 <= a <= 26.5 from its piece's q: exp(-h^2 - 0.5625) exp((h - a)(h + a) + q)
// / a, h = a to 21 bits, so that h^2 is exact (the exp of -a^2 in two parts, as glibc).
inline double erfc_tail(double a, double q) {
  const double h = from_bits(to_bits(a) & 0xffffffff00000000ULL);
  return exp_any(-h * h - 0.5625) * exp_any((h - a) * (h + a) + q) / a;
}

// 0.5 x (1 + erf(x / sqrt 2)): the reference's formula, erf computed as glibc's (the same
// pieces, the same sums in the same order; its exp is exp_any). Where z = x / sqrt 2 is
// below -0.84375, 1 + erf(z) is erfc(|z|) computed directly, not 1 - erf(|z|), which
// cancels (the reference's loses those bits). ErfWay::selects: every piece for every
// element, the right one kept by selects, for the vectorizer; selects_without_tail: the
// same without erfc's two exps, for elements that need none; branches: only the element's
// piece (the baseline's scalar loop: SSE2's vectors, without blends, run it slower). The
// operations on a value are the same every way, so are the bits.
enum class ErfWay { branches, selects, selects_without_tail };

template <ErfWay kWay>
inline double gelu_erf_one(double x) {
  constexpr double kSqrt2 = 0x1.6a09e667f3bcdp0;  // the float64 nearest sqrt(2)
  constexpr double kErx = 0x1.b0ac16p-1;          // erf(1) rounded to 24 bits
  constexpr double kTailEnd = 26.5;               // erfc(26.5) = 2.2e-307; 0 beyond
  const double z = x / kSqrt2;
  const double a = z < 0 ? -z : z;
  const bool tiny = a < 0x1p-28, in0 = a < 0.84375, in1 = a < 1.25, in2 = a < 0x1.6db6ep1;
  const double ac = a < kTailEnd ? a : kTailEnd;
  if constexpr (kWay == ErfWay::selects_without_tail) {  // no element needs erfc_tail
    const double q = erf_ratio(tiny ? 0.0 : (in0 ? z * z : a - 1.0), tiny, in0, true, true);
    const double positive = in1 ? kErx + q : 1.0;
    const double negative = in1 ? (1.0 - kErx) - q : 0.0;
    return 0.5 * x * (in0 ? 1.0 + (z + z * q) : (z >= 0 ? 1.0 + positive : negative));
  } else if constexpr (kWay == ErfWay::selects) {
    const double t = tiny ? 0.0 : (in0 ? z * z : (in1 ? a - 1.0 : 1.0 / (ac * ac)));
    const double q = erf_ratio(t, tiny, in0, in1, in2);
    const double erfc = erfc_tail(ac, q);
    const double positive = in1 ? kErx + q : (a < 6 ? 1.0 - erfc : 1.0);           // erf(a) from 0.84375 up
    const double negative = in1 ? (1.0 - kErx) - q : (a < kTailEnd ? erfc : 0.0);  // erfc(a) = 1 + erf(-a)
    return 0.5 * x * (in0 ? 1.0 + (z + z * q) : (z >= 0 ? 1.0 + positive : negative));
  } else {
    if (in0) return 0.5 * x * (1.0 + (z + z * erf_ratio(tiny ? 0.0 : z * z, tiny, true, true, true)));
    if (in1) {
      const double q = erf_ratio(a - 1.0, false, false, true, true);
      return 0.5 * x * (z >= 0 ? 1.0 + (kErx + q) : (1.0 - kErx) - q);
    }
    if (z >= 0 && a >= 6) return 0.5 * x * (1.0 + 1.0);
    if (!(a < kTailEnd)) return 0.5 * x * 0.0;  // and NaN
    const double erfc = erfc_tail(ac, erf_ratio(1.0 / (ac * ac), false, false, false, in2));
    return 0.5 * x * (z >= 0 ? 1.0 + (1.0 - erfc) : erfc);
  }
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

// v[i] = gelu_erf_one<kWay>(v[i]) for i < n: each way's loop in one place, where the
// compiler inlines the function and vectorizes the loop (called twice, it would not inline).
template <ErfWay kWay>
void gelu_erf_loop(double* v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) v[i] = gelu_erf_one<kWay>(v[i]);
}

void gelu_erf(double* h, std::size_t n) {
#if ATTN_PRODUCT_ISA == 0
  for (std::size_t i = 0; i < n; ++i) h[i] = gelu_erf_one<ErfWay::branches>(h[i]);
#else
  // Most pre-activations need no erfc (|z| < 1.25; with a margin, |x| < 1.767) or lie past
  // its ends (z >= 6, z <= -26.5), and its two exps are most of the work: a chunk's other
  // elements are copied aside first, all of the chunk computed without erfc, then those
  // with it and put back (a chunk of mostly such elements is computed whole with erfc).
  // Each value is the same either way.
  constexpr std::size_t kChunk = 256;
  double tail[kChunk];
  std::size_t at[kChunk];
  for (std::size_t begin = 0; begin < n; begin += kChunk) {
    double* c = h + begin;
    const std::size_t m = n - begin < kChunk ? n - begin : kChunk;
    std::size_t k = 0;
    for (std::size_t i = 0; i < m; ++i) {  // no branch: written always, kept when needed
      const double x = c[i];
      tail[k] = x;
      at[k] = i;
      k += !((x > -1.767 && x < 1.767) || x > 8.5 || x < -37.5);  // and NaN
    }
    if (2 * k > m) {  // mostly tails (wide pre-activations): the whole chunk with erfc
      gelu_erf_loop<ErfWay::selects>(c, m);
      continue;
    }
    gelu_erf_loop<ErfWay::selects_without_tail>(c, m);
    gelu_erf_loop<ErfWay::selects>(tail, k);
    for (std::size_t j = 0; j < k; ++j) c[at[j]] = tail[j];
  }
#endif
}

// x / (1 + exp(-x)), today's formula with exp_any for std::exp: for x below -709.78 the
// exp is inf and the result -0, above 708 the exp is under an ulp of 1 and the result x.
void silu(double* h, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) h[i] = h[i] / (1.0 + exp_any(-h[i]));
}

// 0.5 x (1 + tanh(u)) = x sigmoid(2u) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715
// x^3) computed as steps/feed_forward.cpp's reference does: no tanh, and no 1 + tanh(u)
// that cancels for negative x (the reference loses those bits, this form keeps them).
void gelu_tanh(double* h, std::size_t n) {
  constexpr double kSqrt2OverPi = 0x1.9884533d43651p-1;  // the float64 nearest sqrt(2/pi)
  constexpr double kCubic = 0.044715;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = h[i];
    const double u = kSqrt2OverPi * (x + kCubic * x * x * x);
    h[i] = x / (1.0 + exp_any(-2.0 * u));
  }
}

}  // namespace attn::ATTN_ROWS_NAMESPACE
