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
// kLanes bfloat16 or binary16 numbers at p, widened: bfloat16 is the top half of a float32
// (an integer widening and shift), binary16 the F16C conversion (exact, subnormals too)
inline Vec load_bf16(const unsigned char* p) {
  const __m256i bits = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm512_cvtps_pd(_mm256_castsi256_ps(_mm256_slli_epi32(bits, 16)));
}
inline Vec load_f16(const unsigned char* p) {
  return _mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
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
inline Vec load_bf16(const unsigned char* p) {
  const __m128i bits = _mm_cvtepu16_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  return _mm256_cvtps_pd(_mm_castsi128_ps(_mm_slli_epi32(bits, 16)));
}
inline Vec load_f16(const unsigned char* p) {
  return _mm256_cvtps_pd(_mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
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
inline Vec load_bf16(const unsigned char* p) {  // each number into the top half of a float32
  int two;
  __builtin_memcpy(&two, p, 4);
  return _mm_cvtps_pd(_mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), _mm_cvtsi32_si128(two))));
}
inline Vec load_f16(const unsigned char* p);  // no F16C on the baseline: bit by bit, below
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
double stored_number(OperandType type, const unsigned char* bytes, std::size_t i) {
  if (type == OperandType::F32) {
    float v;
    __builtin_memcpy(&v, bytes + 4 * i, 4);
    return static_cast<double>(v);
  }
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

#if ATTN_PRODUCT_ISA == 0
inline Vec load_f16(const unsigned char* p) {
  return _mm_set_pd(stored_number(OperandType::F16, p, 1), stored_number(OperandType::F16, p, 0));
}
#endif

// kLanes numbers of b from number i on, as stored, widened exactly to float64.
template <OperandType kType>
inline Vec load_stored(const MatrixOperand& b, std::size_t i) {
  if constexpr (kType == OperandType::Double) return load(b.data + i);
  if constexpr (kType == OperandType::F64) return load(reinterpret_cast<const double*>(b.stored + 8 * i));
  if constexpr (kType == OperandType::F32) return load_f32(b.stored + 4 * i);
  if constexpr (kType == OperandType::BF16) return load_bf16(b.stored + 2 * i);
  return load_f16(b.stored + 2 * i);
}

// f(Stored<T>{}) for the stored type T: one instantiation of a kernel per type.
template <OperandType T>
struct Stored {
  static constexpr OperandType kType = T;
};
template <class F>
inline auto by_type(OperandType type, F&& f) {
  switch (type) {
    case OperandType::Double:
      return f(Stored<OperandType::Double>{});
    case OperandType::F64:
      return f(Stored<OperandType::F64>{});
    case OperandType::F32:
      return f(Stored<OperandType::F32>{});
    case OperandType::F16:
      return f(Stored<OperandType::F16>{});
    case OperandType::BF16:
      break;
  }
  return f(Stored<OperandType::BF16>{});
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

#if ATTN_PRODUCT_ISA >= 1
// Four numbers from p (F32, F16 or BF16), widened exactly to float32.
template <OperandType kType>
inline __m128 four_floats(const unsigned char* p) {
  if constexpr (kType == OperandType::F32) return _mm_loadu_ps(reinterpret_cast<const float*>(p));
  const __m128i bits = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  if constexpr (kType == OperandType::BF16) return _mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(bits), 16));
  return _mm_cvtph_ps(bits);
}

// column[q] = op(b)(k + q, j..j+3) for q < 4, of a transposed b: its stored rows j..j+3,
// four numbers of each read along the row and turned in registers. Four lanes in both
// the AVX2 and the AVX-512 builds: the lanes are independent sums, so the bits are the same.
template <OperandType kType>
inline void columns_of_four(const MatrixOperand& b, std::size_t j, std::size_t k, __m256d column[4]) {
  if constexpr (kType == OperandType::Double || kType == OperandType::F64) {
    __m256d r[4];
    for (std::size_t q = 0; q < 4; ++q) {
      const std::size_t at = (j + q) * b.stride + k;
      if constexpr (kType == OperandType::Double)
        r[q] = _mm256_loadu_pd(b.data + at);
      else
        r[q] = _mm256_loadu_pd(reinterpret_cast<const double*>(b.stored + 8 * at));
    }
    const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
    const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
    column[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    column[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    column[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    column[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
  } else {
    constexpr std::size_t size = kType == OperandType::F32 ? 4 : 2;
    const unsigned char* at = b.stored + size * (j * b.stride + k);
    const std::size_t row = size * b.stride;
    __m128 r0 = four_floats<kType>(at), r1 = four_floats<kType>(at + row);
    __m128 r2 = four_floats<kType>(at + 2 * row), r3 = four_floats<kType>(at + 3 * row);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    column[0] = _mm256_cvtps_pd(r0);
    column[1] = _mm256_cvtps_pd(r1);
    column[2] = _mm256_cvtps_pd(r2);
    column[3] = _mm256_cvtps_pd(r3);
  }
}
#endif

// Indices [k0, k0 + kc) and columns [j0, j0 + columns) of op(B) as panels of kNr columns,
// each (kc, kNr) row-major; the columns past the last are zeros. A whole panel is read a
// vector at a time and widened in registers (transposed, four stored rows at a time,
// turned in registers); the last, partial one number by number.
template <OperandType kType>
void pack_b_as(const MatrixOperand& b, std::size_t k0, std::size_t kc, std::size_t j0, std::size_t columns,
               double* out) {
  for (std::size_t panel = 0; panel < columns; panel += kNr, out += kc * kNr) {
    const std::size_t width = smaller(kNr, columns - panel), j = j0 + panel;
    std::size_t k = 0;
    if (width == kNr && !b.transposed)
      for (; k < kc; ++k)
        for (std::size_t v = 0; v < kVecs; ++v)
          store(out + k * kNr + v * kLanes, load_stored<kType>(b, (k0 + k) * b.stride + j + v * kLanes));
#if ATTN_PRODUCT_ISA >= 1
    if (width == kNr && b.transposed)
      for (; k + 4 <= kc; k += 4)
        for (std::size_t r = 0; r < kNr; r += 4) {
          __m256d column[4];
          columns_of_four<kType>(b, j + r, k0 + k, column);
          for (std::size_t q = 0; q < 4; ++q) _mm256_storeu_pd(out + (k + q) * kNr + r, column[q]);
        }
#endif
    for (; k < kc; ++k)
      for (std::size_t c = 0; c < kNr; ++c) out[k * kNr + c] = c < width ? element(b, k0 + k, j + c) : 0.0;
  }
}

void pack_b(const MatrixOperand& b, std::size_t k0, std::size_t kc, std::size_t j0, std::size_t columns, double* out) {
  by_type(b.type, [&](auto t) { pack_b_as<decltype(t)::kType>(b, k0, kc, j0, columns, out); });
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

// Rows of op(A) fewer than a tile's (a generated token's), b read in place, each stored
// number once per row, widened in registers (packing b would cost more than multiplying);
// the sums the tiles' (blocks of kKc, their order, multiply_add): the bits of a larger product.
// b as stored (K,P): kChunk columns of the row at a time, their sums over one block of kKc
// indices kept in `sums` (in the row itself for the first block, whose sums the row takes
// as they are), each four rows of b read along the whole chunk in one pass. Every sum is
// still acc = 0, then acc + a(i,k) b(k,j) for k in order, and b streams from memory once.
constexpr std::size_t kChunk = 1024;  // columns: kChunk doubles of sums stay in the first-level cache
template <OperandType kType>
void multiply_row_chunk(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, double* row, std::size_t j0,
                        std::size_t width, std::size_t K, double* sums) {
  const std::size_t whole = width / kLanes * kLanes;
  for (std::size_t k0 = 0; k0 < K; k0 += kKc) {
    const std::size_t k_end = smaller(K, k0 + kKc);
    double* acc = k0 == 0 ? row + j0 : sums;
    for (std::size_t j = 0; j < width; ++j) acc[j] = 0.0;
    std::size_t k = k0;
    for (; k + 4 <= k_end; k += 4) {
      const Vec x0 = broadcast(element(a, i, k)), x1 = broadcast(element(a, i, k + 1));
      const Vec x2 = broadcast(element(a, i, k + 2)), x3 = broadcast(element(a, i, k + 3));
      const std::size_t b0 = k * b.stride + j0, step = b.stride;
      for (std::size_t j = 0; j < whole; j += kLanes) {
        Vec sum = load(acc + j);
        sum = multiply_add(x0, load_stored<kType>(b, b0 + j), sum);
        sum = multiply_add(x1, load_stored<kType>(b, b0 + step + j), sum);
        sum = multiply_add(x2, load_stored<kType>(b, b0 + 2 * step + j), sum);
        sum = multiply_add(x3, load_stored<kType>(b, b0 + 3 * step + j), sum);
        store(acc + j, sum);
      }
      for (std::size_t j = whole; j < width; ++j)
        for (std::size_t q = 0; q < 4; ++q)
          acc[j] = multiply_add(element(a, i, k + q), element(b, k + q, j0 + j), acc[j]);
    }
    for (; k < k_end; ++k) {
      const Vec x = broadcast(element(a, i, k));
      for (std::size_t j = 0; j < whole; j += kLanes)
        store(acc + j, multiply_add(x, load_stored<kType>(b, k * b.stride + j0 + j), load(acc + j)));
      for (std::size_t j = whole; j < width; ++j)
        acc[j] = multiply_add(element(a, i, k), element(b, k, j0 + j), acc[j]);
    }
    if (k0 > 0)
      for (std::size_t j = 0; j < width; ++j) row[j0 + j] = row[j0 + j] + sums[j];
  }
}

// sums: kChunk doubles of scratch (or P, when fewer).
template <OperandType kType>
void multiply_rows(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                   std::size_t K, std::size_t P, double* sums) {
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j0 = 0; j0 < P; j0 += kChunk)
      multiply_row_chunk<kType>(a, b, i, c + i * ldc, j0, smaller(kChunk, P - j0), K, sums);
}

#if ATTN_PRODUCT_ISA >= 1
constexpr std::size_t kRowGroups = 4;  // groups of four columns per pass

// The last columns, fewer than a pass: one sum at a time.
void multiply_row_tail(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, double* row, std::size_t j,
                       std::size_t k0, std::size_t k_end, std::size_t P) {
  for (; j < P; ++j) {
    double acc = 0.0;
    for (std::size_t k = k0; k < k_end; ++k) acc = multiply_add(element(a, i, k), element(b, k, j), acc);
    row[j] = k0 > 0 ? row[j] + acc : acc;
  }
}

// b transposed, stored (P,K) (Llama's projections, a tied head): kRowGroups groups of four
// columns of op(b) at a time, each group's stored rows read along (columns_of_four). A
// group's block of k done, its four sums are written, then the next block's.
template <OperandType kType>
void multiply_rows_transposed(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                              std::size_t K, std::size_t P) {
  constexpr std::size_t kStep = 4 * kRowGroups;
  for (std::size_t i = 0; i < M; ++i) {
    double* row = c + i * ldc;
    std::size_t j = 0;
    for (; j + kStep <= P; j += kStep)
      for (std::size_t k0 = 0; k0 < K; k0 += kKc) {
        const std::size_t k_end = smaller(K, k0 + kKc);
        __m256d acc[kRowGroups];
        for (std::size_t g = 0; g < kRowGroups; ++g) acc[g] = _mm256_setzero_pd();
        std::size_t k = k0;
        for (; k + 4 <= k_end; k += 4) {
          __m256d x[4];
          for (std::size_t q = 0; q < 4; ++q) x[q] = _mm256_set1_pd(element(a, i, k + q));
#pragma GCC unroll 4
          for (std::size_t g = 0; g < kRowGroups; ++g) {
            __m256d column[4];
            columns_of_four<kType>(b, j + 4 * g, k, column);
            for (std::size_t q = 0; q < 4; ++q) acc[g] = _mm256_fmadd_pd(x[q], column[q], acc[g]);
          }
        }
        for (; k < k_end; ++k) {
          const __m256d x = _mm256_set1_pd(element(a, i, k));
          for (std::size_t g = 0; g < kRowGroups; ++g) {
            const std::size_t at = j + 4 * g;
            const __m256d column =
                _mm256_set_pd(element(b, k, at + 3), element(b, k, at + 2), element(b, k, at + 1), element(b, k, at));
            acc[g] = _mm256_fmadd_pd(x, column, acc[g]);
          }
        }
        for (std::size_t g = 0; g < kRowGroups; ++g) {
          double* to = row + j + 4 * g;
          _mm256_storeu_pd(to, k0 > 0 ? _mm256_add_pd(_mm256_loadu_pd(to), acc[g]) : acc[g]);
        }
      }
    for (std::size_t k0 = 0; k0 < K; k0 += kKc) multiply_row_tail(a, b, i, row, j, k0, smaller(K, k0 + kKc), P);
  }
}
#endif

// The rows of op(A) by multiply_rows when this instruction set has a row kernel for b's
// layout; false when not (the baseline's transposed b: packed like a larger product).
template <OperandType kType>
bool multiply_few_rows_as(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                          std::size_t K, std::size_t P, double* sums) {
  if (!b.transposed) {
    multiply_rows<kType>(a, b, c, ldc, M, K, P, sums);
    return true;
  }
#if ATTN_PRODUCT_ISA >= 1
  multiply_rows_transposed<kType>(a, b, c, ldc, M, K, P);
  return true;
#else
  return false;
#endif
}

bool multiply_few_rows(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                       std::size_t K, std::size_t P, double* sums) {
  return by_type(b.type, [&](auto t) { return multiply_few_rows_as<decltype(t)::kType>(a, b, c, ldc, M, K, P, sums); });
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
  double* const a_packed = workspace;
  double* const b_packed = workspace + round_up(smaller(kMc, M), kMr) * smaller(kKc, K);
  // b_packed holds at least min(kNc, P) >= min(kChunk, P) doubles: the row kernel's sums
  if (M < kMr && multiply_few_rows(a, b, c, ldc, M, K, P, b_packed)) return;
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
