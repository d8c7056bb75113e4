// The large product C = op(A) @ op(B), blocked as BLIS and OpenBLAS block it, for one
// instruction set, chosen by ATTN_PRODUCT_ISA (0: SSE2, the x86-64 baseline; 1: AVX2 and
// FMA; 2: AVX-512F). CMakeLists.txt compiles this file once per value with the matching
// -m flags; product_isa.h says why nothing here may be shared between the copies.
//
// The order of the sums is set by the sizes alone: element (i, j) is, for each block of
// kKc indices k in turn, acc = 0, acc = acc + a(i,k) b(k,j) for k in order (one fused
// multiply-add with FMA, a product and a sum without), then C(i,j) = acc for the first
// block and C(i,j) + acc for the others. The tile sizes below change which elements are
// computed together, never that order, so the AVX2 and AVX-512 kernels give the same bits;
// the baseline, without FMA, rounds twice per term and differs in the last bits.
#include "kernels/product_isa.h"

#include <immintrin.h>

#ifndef ATTN_PRODUCT_ISA
#error "ATTN_PRODUCT_ISA must be 0 (baseline), 1 (avx2) or 2 (avx512)"
#endif

#if ATTN_PRODUCT_ISA == 2
#define ATTN_PRODUCT_NAMESPACE product_avx512
#elif ATTN_PRODUCT_ISA == 1
#define ATTN_PRODUCT_NAMESPACE product_avx2
#else
#define ATTN_PRODUCT_NAMESPACE product_baseline
#endif

namespace attn::ATTN_PRODUCT_NAMESPACE {

namespace {

// Indices k per block: the same for every instruction set (the sums' order, above).
constexpr std::size_t kKc = 256;
// Columns of op(B) packed at a time (a block of b that stays in the last-level cache).
constexpr std::size_t kNc = 4096;

#if ATTN_PRODUCT_ISA == 2
using Vec = __m512d;
constexpr std::size_t kLanes = 8, kMr = 12, kNr = 16, kMc = 144;
inline Vec zero() { return _mm512_setzero_pd(); }
inline Vec load(const double* p) { return _mm512_loadu_pd(p); }
// kLanes float32 numbers at p (any alignment), widened
inline Vec load_f32(const unsigned char* p) {
  return _mm512_cvtps_pd(_mm256_loadu_ps(reinterpret_cast<const float*>(p)));
}
inline void store(double* p, Vec v) { _mm512_storeu_pd(p, v); }
inline Vec broadcast(double x) { return _mm512_set1_pd(x); }
inline Vec add(Vec x, Vec y) { return _mm512_add_pd(x, y); }
inline Vec multiply_add(Vec x, Vec y, Vec acc) { return _mm512_fmadd_pd(x, y, acc); }
inline double multiply_add(double x, double y, double acc) {
  return _mm_cvtsd_f64(_mm_fmadd_sd(_mm_set_sd(x), _mm_set_sd(y), _mm_set_sd(acc)));
}
#elif ATTN_PRODUCT_ISA == 1
using Vec = __m256d;
constexpr std::size_t kLanes = 4, kMr = 6, kNr = 8, kMc = 96;
inline Vec zero() { return _mm256_setzero_pd(); }
inline Vec load(const double* p) { return _mm256_loadu_pd(p); }
inline Vec load_f32(const unsigned char* p) { return _mm256_cvtps_pd(_mm_loadu_ps(reinterpret_cast<const float*>(p))); }
inline void store(double* p, Vec v) { _mm256_storeu_pd(p, v); }
inline Vec broadcast(double x) { return _mm256_set1_pd(x); }
inline Vec add(Vec x, Vec y) { return _mm256_add_pd(x, y); }
inline Vec multiply_add(Vec x, Vec y, Vec acc) { return _mm256_fmadd_pd(x, y, acc); }
inline double multiply_add(double x, double y, double acc) {
  return _mm_cvtsd_f64(_mm_fmadd_sd(_mm_set_sd(x), _mm_set_sd(y), _mm_set_sd(acc)));
}
#else
using Vec = __m128d;
constexpr std::size_t kLanes = 2, kMr = 4, kNr = 4, kMc = 96;
inline Vec zero() { return _mm_setzero_pd(); }
inline Vec load(const double* p) { return _mm_loadu_pd(p); }
inline Vec load_f32(const unsigned char* p) {
  return _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
inline void store(double* p, Vec v) { _mm_storeu_pd(p, v); }
inline Vec broadcast(double x) { return _mm_set1_pd(x); }
inline Vec add(Vec x, Vec y) { return _mm_add_pd(x, y); }
// No FMA on the baseline: a rounded product, then a rounded sum.
inline Vec multiply_add(Vec x, Vec y, Vec acc) { return _mm_add_pd(_mm_mul_pd(x, y), acc); }
inline double multiply_add(double x, double y, double acc) { return x * y + acc; }  // -ffp-contract=off
#endif
constexpr std::size_t kVecs = kNr / kLanes;  // vectors per row of a tile
static_assert(kMc % kMr == 0, "a block of A is whole panels");

inline std::size_t smaller(std::size_t x, std::size_t y) { return x < y ? x : y; }
inline std::size_t round_up(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }

// The stored numbers (MatrixOperand::stored) as float64, exactly: number i of `bytes`.
// Little-endian on disk as on x86-64; read by memcpy at any alignment. (The library's own
// converters, attn/tensor.h, are not called from here: product_isa.h.)
inline double stored_f32(const unsigned char* bytes, std::size_t i) {
  float v;
  __builtin_memcpy(&v, bytes + 4 * i, 4);
  return static_cast<double>(v);
}
double stored_number(OperandType type, const unsigned char* bytes, std::size_t i) {
  if (type == OperandType::F32) return stored_f32(bytes, i);
  if (type == OperandType::F64) {
    double v;
    __builtin_memcpy(&v, bytes + 8 * i, 8);
    return v;
  }
  unsigned short half;
  __builtin_memcpy(&half, bytes + 2 * i, 2);
  unsigned int bits;
  if (type == OperandType::BF16) {
    bits = static_cast<unsigned int>(half) << 16;
  } else {  // F16 -> the float32 of the same value (every binary16 is one), bit by bit
    const unsigned int sign = (half & 0x8000u) << 16, exponent = (half >> 10) & 0x1fu, mantissa = half & 0x3ffu;
    if (exponent == 31) {
      bits = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) {
      bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: m · 2^-24, normalized
      unsigned int e = 113, m = mantissa;
      while (!(m & 0x400u)) {
        m <<= 1;
        --e;
      }
      bits = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
  }
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return static_cast<double>(f);
}

// Element (row, column) of an operand as the product reads it (op applied).
inline double element(const MatrixOperand& m, std::size_t row, std::size_t column) {
  const std::size_t i = m.transposed ? column * m.stride + row : row * m.stride + column;
  return m.type == OperandType::Double ? m.data[i] : stored_number(m.type, m.stored, i);
}

// Rows [i0, i0 + rows) and indices [k0, k0 + kc) of op(A) as panels of kMr rows, each
// (kc, kMr) row-major; the rows past the last are zeros.
void pack_a(const MatrixOperand& a, std::size_t i0, std::size_t rows, std::size_t k0, std::size_t kc, double* out) {
  for (std::size_t panel = 0; panel < rows; panel += kMr, out += kc * kMr) {
    const std::size_t height = smaller(kMr, rows - panel);
    for (std::size_t k = 0; k < kc; ++k)
      for (std::size_t r = 0; r < kMr; ++r) out[k * kMr + r] = r < height ? element(a, i0 + panel + r, k0 + k) : 0.0;
  }
}

// Indices [k0, k0 + kc) and columns [j0, j0 + columns) of op(B) as panels of kNr columns,
// each (kc, kNr) row-major; the columns past the last are zeros.
void pack_b(const MatrixOperand& b, std::size_t k0, std::size_t kc, std::size_t j0, std::size_t columns, double* out) {
  for (std::size_t panel = 0; panel < columns; panel += kNr, out += kc * kNr) {
    const std::size_t width = smaller(kNr, columns - panel);
    if (!b.transposed && width == kNr && b.type == OperandType::Double) {
      for (std::size_t k = 0; k < kc; ++k)
        for (std::size_t v = 0; v < kVecs; ++v)
          store(out + k * kNr + v * kLanes, load(b.data + (k0 + k) * b.stride + j0 + panel + v * kLanes));
      continue;
    }
    if (!b.transposed && width == kNr && b.type == OperandType::F32) {  // widened as packed
      for (std::size_t k = 0; k < kc; ++k)
        for (std::size_t v = 0; v < kVecs; ++v)
          store(out + k * kNr + v * kLanes, load_f32(b.stored + 4 * ((k0 + k) * b.stride + j0 + panel + v * kLanes)));
      continue;
    }
    if (b.transposed && b.type == OperandType::F32) {  // each column of op(b) a stored row, read along
      for (std::size_t j = 0; j < width; ++j) {
        const unsigned char* row = b.stored + 4 * ((j0 + panel + j) * b.stride + k0);
        for (std::size_t k = 0; k < kc; ++k) out[k * kNr + j] = stored_f32(row, k);
      }
      for (std::size_t j = width; j < kNr; ++j)
        for (std::size_t k = 0; k < kc; ++k) out[k * kNr + j] = 0.0;
      continue;
    }
    for (std::size_t k = 0; k < kc; ++k)
      for (std::size_t j = 0; j < kNr; ++j) out[k * kNr + j] = j < width ? element(b, k0 + k, j0 + panel + j) : 0.0;
  }
}

// One tile: C[0..rows, 0..columns) (rows ldc apart) = (or += when accumulate) the packed
// panels a (kc, kMr) @ b (kc, kNr). The accumulators stay in registers.
void tile(std::size_t kc, const double* a, const double* b, double* c, std::size_t ldc, std::size_t rows,
          std::size_t columns, bool accumulate) {
  Vec acc[kMr][kVecs];
#pragma GCC unroll 16
  for (std::size_t r = 0; r < kMr; ++r)
#pragma GCC unroll 4
    for (std::size_t v = 0; v < kVecs; ++v) acc[r][v] = zero();
  for (std::size_t k = 0; k < kc; ++k, a += kMr, b += kNr) {
    Vec row[kVecs];
#pragma GCC unroll 4
    for (std::size_t v = 0; v < kVecs; ++v) row[v] = load(b + v * kLanes);
#pragma GCC unroll 16
    for (std::size_t r = 0; r < kMr; ++r) {
      const Vec x = broadcast(a[r]);
#pragma GCC unroll 4
      for (std::size_t v = 0; v < kVecs; ++v) acc[r][v] = multiply_add(x, row[v], acc[r][v]);
    }
  }
  if (rows == kMr && columns == kNr) {
#pragma GCC unroll 16
    for (std::size_t r = 0; r < kMr; ++r)
#pragma GCC unroll 4
      for (std::size_t v = 0; v < kVecs; ++v) {
        double* to = c + r * ldc + v * kLanes;
        store(to, accumulate ? add(load(to), acc[r][v]) : acc[r][v]);
      }
    return;
  }
  alignas(64) double part[kMr * kNr];
  for (std::size_t r = 0; r < kMr; ++r)
    for (std::size_t v = 0; v < kVecs; ++v) store(part + r * kNr + v * kLanes, acc[r][v]);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < columns; ++j) {
      double& to = c[r * ldc + j];
      to = accumulate ? to + part[r * kNr + j] : part[r * kNr + j];
    }
}

// C[i0.., j0..] for rows [i0, i0 + rows) and columns [j0, j0 + columns) from the packed
// blocks: the b panels outside (each stays in the first-level cache while every a panel
// of the block passes it), the a panels inside.
void multiply_blocks(const double* a_packed, const double* b_packed, std::size_t kc, double* c, std::size_t ldc,
                     std::size_t rows, std::size_t columns, bool accumulate) {
  for (std::size_t j = 0; j < columns; j += kNr) {
    const double* b_panel = b_packed + (j / kNr) * kc * kNr;
    for (std::size_t i = 0; i < rows; i += kMr)
      tile(kc, a_packed + (i / kMr) * kc * kMr, b_panel, c + i * ldc + j, ldc, smaller(kMr, rows - i),
           smaller(kNr, columns - j), accumulate);
  }
}

// Rows of op(A) fewer than a tile's (a row of a generated token, say), with B read in
// place: packing B would cost more than multiplying. The sums are the tiles' (the same
// blocks of kKc, the same order, the same multiply_add), so a row gives the same bits here
// as in a larger product.
constexpr std::size_t kRowVecs = 4;  // vectors of columns per pass
// kLanes numbers of b from number i: doubles, or stored float32 widened (kF32)
template <bool kF32>
inline Vec load_b(const MatrixOperand& b, std::size_t i) {
  if constexpr (kF32) return load_f32(b.stored + 4 * i);
  return load(b.data + i);
}
template <bool kF32>
void multiply_rows(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                   std::size_t K, std::size_t P) {
  constexpr std::size_t kStep = kRowVecs * kLanes;
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t k0 = 0; k0 < K; k0 += kKc) {
      const std::size_t k_end = smaller(K, k0 + kKc);
      double* row = c + i * ldc;
      std::size_t j = 0;
      for (; j + kStep <= P; j += kStep) {
        Vec acc[kRowVecs];
#pragma GCC unroll 4
        for (std::size_t v = 0; v < kRowVecs; ++v) acc[v] = zero();
        for (std::size_t k = k0; k < k_end; ++k) {
          const Vec x = broadcast(element(a, i, k));
          const std::size_t b_row = k * b.stride + j;
#pragma GCC unroll 4
          for (std::size_t v = 0; v < kRowVecs; ++v)
            acc[v] = multiply_add(x, load_b<kF32>(b, b_row + v * kLanes), acc[v]);
        }
#pragma GCC unroll 4
        for (std::size_t v = 0; v < kRowVecs; ++v)
          store(row + j + v * kLanes, k0 > 0 ? add(load(row + j + v * kLanes), acc[v]) : acc[v]);
      }
      for (; j < P; ++j) {
        double acc = 0.0;
        for (std::size_t k = k0; k < k_end; ++k) acc = multiply_add(element(a, i, k), element(b, k, j), acc);
        row[j] = k0 > 0 ? row[j] + acc : acc;
      }
    }
}

}  // namespace

std::size_t product_workspace(std::size_t M, std::size_t K, std::size_t P) {
  const std::size_t kc = smaller(kKc, K), a_block = round_up(smaller(kMc, M), kMr) * kc;
  return a_block + round_up(smaller(kNc, P), kNr) * kc;
}

void product(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M, std::size_t K,
             std::size_t P, double* workspace) {
  if (K == 0) {  // an empty sum
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < P; ++j) c[i * ldc + j] = 0.0;
    return;
  }
  if (M < kMr && !b.transposed && (b.type == OperandType::Double || b.type == OperandType::F32)) {
    if (b.type == OperandType::F32)
      multiply_rows<true>(a, b, c, ldc, M, K, P);
    else
      multiply_rows<false>(a, b, c, ldc, M, K, P);
    return;
  }
  double* const a_packed = workspace;
  double* const b_packed = workspace + round_up(smaller(kMc, M), kMr) * smaller(kKc, K);
  for (std::size_t j0 = 0; j0 < P; j0 += kNc) {
    const std::size_t columns = smaller(kNc, P - j0);
    for (std::size_t k0 = 0; k0 < K; k0 += kKc) {
      const std::size_t kc = smaller(kKc, K - k0);
      pack_b(b, k0, kc, j0, columns, b_packed);
      for (std::size_t i0 = 0; i0 < M; i0 += kMc) {
        const std::size_t rows = smaller(kMc, M - i0);
        pack_a(a, i0, rows, k0, kc, a_packed);
        multiply_blocks(a_packed, b_packed, kc, c + i0 * ldc + j0, ldc, rows, columns, k0 > 0);
      }
    }
  }
}

}  // namespace attn::ATTN_PRODUCT_NAMESPACE
