// What product_isa.cpp (the blocked product) and product_rows_isa.cpp (the products of a
// few rows) share, compiled with them once per instruction set (ATTN_PRODUCT_ISA, their
// CMakeLists.txt flags): the vector type and its operations, the stored numbers widened,
// the operand's elements. Everything is in an unnamed namespace inside the instruction
// set's own (product_isa.h says why nothing may be shared between the copies); only
// multiply_few_rows, at the end, links the two files. Internal to src/kernels/.
#ifndef ATTN_KERNELS_PRODUCT_ISA_INLINE_H_
#define ATTN_KERNELS_PRODUCT_ISA_INLINE_H_

#include "kernels/matrix_kernel.h"

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
inline double stored_number(OperandType type, const unsigned char* bytes, std::size_t i) {
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

// Number (k, p) of an operand in panels (attn/tensor.h's in_panels; panel_position's
// order, written again here: product_isa.h).
inline std::size_t panel_index(const MatrixOperand& m, std::size_t k, std::size_t p) {
  const std::size_t c = p % m.panel, position = m.type != OperandType::BF16 ? c : c < 16 ? 2 * c : 2 * (c - 16) + 1;
  return (p / m.panel * m.stride + k) * m.panel + position;
}

// Element (row, column) of an operand as the product reads it (op applied).
inline double element(const MatrixOperand& m, std::size_t row, std::size_t column) {
  if (m.panel)
    return stored_number(m.type, m.stored, m.transposed ? panel_index(m, column, row) : panel_index(m, row, column));
  const std::size_t i = m.transposed ? column * m.stride + row : row * m.stride + column;
  return m.type == OperandType::Double ? m.data[i] : stored_number(m.type, m.stored, i);
}

#if ATTN_PRODUCT_ISA == 0
inline Vec load_f16(const unsigned char* p) {
  return _mm_set_pd(stored_number(OperandType::F16, p, 1), stored_number(OperandType::F16, p, 0));
}
#endif

// Bytes of one number of an operand of kType (Double: a float64 in memory).
template <OperandType kType>
constexpr std::size_t stored_bytes() {
  return kType == OperandType::F32 ? 4 : kType == OperandType::F16 || kType == OperandType::BF16 ? 2 : 8;
}

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
    constexpr std::size_t size = stored_bytes<kType>();
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

}  // namespace

// C (M,P), rows ldc apart, = op(a) (M,K) @ op(b) (K,P) for M fewer than a tile's rows (a
// generated token's, a short prompt's), b read in place (product_rows_isa.cpp); `sums` is
// scratch of at least min(4, K) min(1024, P) doubles. False when this instruction set has no row
// kernel for b's layout (the baseline's transposed b): the caller packs b as for a larger
// product. The same bits as the tiles'.
bool multiply_few_rows(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                       std::size_t K, std::size_t P, double* sums);

// The same for a b in panels (MatrixOperand::panel) and up to kPanelRows rows of a
// (product_panels_isa.cpp): false when this instruction set has no panel kernel (the
// baseline) or a is not float64 rows, and the caller packs b. The same bits as the tiles'.
constexpr std::size_t kPanelRows = 64;
bool multiply_panel_rows(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                         std::size_t K, std::size_t P);

}  // namespace attn::ATTN_PRODUCT_NAMESPACE

#endif  // ATTN_KERNELS_PRODUCT_ISA_INLINE_H_
