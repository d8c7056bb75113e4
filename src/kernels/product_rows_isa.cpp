// The products of a few rows of op(A) (a generated token's, a short prompt's) for one
// instruction set, compiled as product_isa.cpp is (ATTN_PRODUCT_ISA): b read in place, each
// stored number once per pass, widened in registers (packing b would cost more than
// multiplying); the sums the tiles' (blocks of kKc, their order, multiply_add), so the
// bits of a larger product.
#include "kernels/product_isa_inline.h"

namespace attn::ATTN_PRODUCT_NAMESPACE {

namespace {

// b as stored (K,P): kChunk columns of kRows rows at a time, their sums over one block of
// kKc indices kept in `sums` (in the rows themselves for the first block, whose sums the
// rows take as they are), each four rows of b read along the whole chunk in one pass and
// used by every row of a. Every sum is still acc = 0, then acc + a(i,k) b(k,j) for k in
// order, and b streams from memory once per kRows rows.
constexpr std::size_t kChunk = 1024;  // columns: 4 kChunk doubles of sums stay in the second-level cache
// Rows of b fetched ahead of the four read: a thread's piece of a row is short (GPT-2's
// 2304 columns in nine pieces: 1 KiB of F32), too short for the hardware's prefetcher to
// find before the piece ends, so each row was waited on.
constexpr std::size_t kRowsAhead = 4;  // the next four (measured as good as 8 or 16)

// The address of number i of b as stored.
template <OperandType kType>
inline const char* stored_address(const MatrixOperand& b, std::size_t i) {
  if constexpr (kType == OperandType::Double) return reinterpret_cast<const char*>(b.data + i);
  return reinterpret_cast<const char*>(b.stored + stored_bytes<kType>() * i);
}

// c's rows i.. (ldc apart), columns [j0, j0 + width); sums: kRows width doubles.
template <OperandType kType, std::size_t kRows>
void multiply_rows_chunk(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, double* c, std::size_t ldc,
                         std::size_t j0, std::size_t width, std::size_t K, double* sums) {
  const std::size_t whole = width / kLanes * kLanes;
  for (std::size_t k0 = 0; k0 < K; k0 += kKc) {
    const std::size_t k_end = smaller(K, k0 + kKc);
    double* acc[kRows];
    for (std::size_t r = 0; r < kRows; ++r) {
      acc[r] = k0 == 0 ? c + (i + r) * ldc + j0 : sums + r * width;
      for (std::size_t j = 0; j < width; ++j) acc[r][j] = 0.0;
    }
    std::size_t k = k0;
    for (; k + 4 <= k_end; k += 4) {
      Vec x[kRows][4];
      for (std::size_t r = 0; r < kRows; ++r)
        for (std::size_t q = 0; q < 4; ++q) x[r][q] = broadcast(element(a, i + r, k + q));
      const std::size_t b0 = k * b.stride + j0, step = b.stride;
      const bool fetch = k + 4 + kRowsAhead <= K;
      for (std::size_t j = 0; j < whole; j += kLanes) {
        if (fetch)
          for (std::size_t q = 0; q < 4; ++q)
            _mm_prefetch(stored_address<kType>(b, b0 + (kRowsAhead + q) * step + j), _MM_HINT_T0);
        const Vec w0 = load_stored<kType>(b, b0 + j), w1 = load_stored<kType>(b, b0 + step + j);
        const Vec w2 = load_stored<kType>(b, b0 + 2 * step + j), w3 = load_stored<kType>(b, b0 + 3 * step + j);
        for (std::size_t r = 0; r < kRows; ++r) {
          Vec sum = load(acc[r] + j);
          sum = multiply_add(x[r][0], w0, sum);
          sum = multiply_add(x[r][1], w1, sum);
          sum = multiply_add(x[r][2], w2, sum);
          sum = multiply_add(x[r][3], w3, sum);
          store(acc[r] + j, sum);
        }
      }
      for (std::size_t r = 0; r < kRows; ++r)
        for (std::size_t j = whole; j < width; ++j)
          for (std::size_t q = 0; q < 4; ++q)
            acc[r][j] = multiply_add(element(a, i + r, k + q), element(b, k + q, j0 + j), acc[r][j]);
    }
    for (; k < k_end; ++k)
      for (std::size_t r = 0; r < kRows; ++r) {
        const Vec x = broadcast(element(a, i + r, k));
        for (std::size_t j = 0; j < whole; j += kLanes)
          store(acc[r] + j, multiply_add(x, load_stored<kType>(b, k * b.stride + j0 + j), load(acc[r] + j)));
        for (std::size_t j = whole; j < width; ++j)
          acc[r][j] = multiply_add(element(a, i + r, k), element(b, k, j0 + j), acc[r][j]);
      }
    if (k0 > 0)
      for (std::size_t r = 0; r < kRows; ++r)
        for (std::size_t j = 0; j < width; ++j) c[(i + r) * ldc + j0 + j] = c[(i + r) * ldc + j0 + j] + acc[r][j];
  }
}

#if ATTN_PRODUCT_ISA >= 1
// The last columns, fewer than a pass: one sum at a time.
void multiply_row_tail(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, double* row, std::size_t j,
                       std::size_t k0, std::size_t k_end, std::size_t P) {
  for (; j < P; ++j) {
    double acc = 0.0;
    for (std::size_t k = k0; k < k_end; ++k) acc = multiply_add(element(a, i, k), element(b, k, j), acc);
    row[j] = k0 > 0 ? row[j] + acc : acc;
  }
}

// b transposed, stored (P,K) (Llama's projections, a tied head), rows i.. of c (ldc
// apart), columns j.. on: kGroups groups of four columns of op(b) at a time, each group's stored rows read
// along (columns_of_four) and used by every row of a. A group's block of k done, its sums
// are written, then the next block's.
template <OperandType kType, std::size_t kRows, std::size_t kGroups>
void multiply_rows_transposed(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, double* c, std::size_t ldc,
                              std::size_t K, std::size_t P, std::size_t j = 0) {
  constexpr std::size_t kStep = 4 * kGroups;
  for (; j + kStep <= P; j += kStep)
    for (std::size_t k0 = 0; k0 < K; k0 += kKc) {
      const std::size_t k_end = smaller(K, k0 + kKc);
      __m256d acc[kGroups][kRows];
      for (std::size_t g = 0; g < kGroups; ++g)
        for (std::size_t r = 0; r < kRows; ++r) acc[g][r] = _mm256_setzero_pd();
      std::size_t k = k0;
      for (; k + 4 <= k_end; k += 4) {
        __m256d x[kRows][4];
        for (std::size_t r = 0; r < kRows; ++r)
          for (std::size_t q = 0; q < 4; ++q) x[r][q] = _mm256_set1_pd(element(a, i + r, k + q));
#pragma GCC unroll 4
        for (std::size_t g = 0; g < kGroups; ++g) {
          __m256d column[4];
          columns_of_four<kType>(b, j + 4 * g, k, column);
          for (std::size_t q = 0; q < 4; ++q)
            for (std::size_t r = 0; r < kRows; ++r) acc[g][r] = _mm256_fmadd_pd(x[r][q], column[q], acc[g][r]);
        }
      }
      for (; k < k_end; ++k)
        for (std::size_t g = 0; g < kGroups; ++g) {
          const std::size_t at = j + 4 * g;
          const __m256d column =
              _mm256_set_pd(element(b, k, at + 3), element(b, k, at + 2), element(b, k, at + 1), element(b, k, at));
          for (std::size_t r = 0; r < kRows; ++r)
            acc[g][r] = _mm256_fmadd_pd(_mm256_set1_pd(element(a, i + r, k)), column, acc[g][r]);
        }
      for (std::size_t g = 0; g < kGroups; ++g)
        for (std::size_t r = 0; r < kRows; ++r) {
          double* to = c + (i + r) * ldc + j + 4 * g;
          _mm256_storeu_pd(to, k0 > 0 ? _mm256_add_pd(_mm256_loadu_pd(to), acc[g][r]) : acc[g][r]);
        }
    }
  for (std::size_t r = 0; r < kRows; ++r)
    for (std::size_t k0 = 0; k0 < K; k0 += kKc)
      multiply_row_tail(a, b, i + r, c + (i + r) * ldc, j, k0, smaller(K, k0 + kKc), P);
}

// The next eight stored rows' (from j) numbers at k..k + 31 into the second-level cache: a
// row of Llama's 2048 BF16 numbers is a page of its own, where the hardware's prefetcher
// does not reach before the row is read.
template <OperandType kType>
inline void fetch_into_l2(const MatrixOperand& b, std::size_t j, std::size_t k) {
  constexpr std::size_t size = stored_bytes<kType>();
  const char* at = reinterpret_cast<const char*>(b.stored) + size * (j * b.stride + k);
  for (std::size_t q = 0; q < 8; ++q)
    for (std::size_t line = 0; line < 32 * size; line += 64) _mm_prefetch(at + q * size * b.stride + line, _MM_HINT_T1);
}

#endif

#if ATTN_PRODUCT_ISA == 1
// A transposed b stored narrower than float64 (F32, F16, BF16), in the AVX2 build: eight of
// its stored rows (eight columns of op(b)) at a time in two groups of four, eight indices k
// of each, widened to float32 and turned in registers (a quarter of a shuffle a number,
// against half in columns_of_four's), then to float64 four at a time; a's rows read
// directly as float64. The sums are the same.

// r[q] holds eight numbers of stored row q at t = 0..7; turned[m] holds the four rows'
// numbers at t = m in its low half and at t = 4 + m in its high half.
inline void turn_four_rows(const __m256 r[4], __m256 turned[4]) {
  // rows 0 and 1 (2 and 3) interleaved: pairs at t 0, 1 | 4, 5 (low) and t 2, 3 | 6, 7 (high)
  const __m256d low01 = _mm256_castps_pd(_mm256_unpacklo_ps(r[0], r[1]));
  const __m256d high01 = _mm256_castps_pd(_mm256_unpackhi_ps(r[0], r[1]));
  const __m256d low23 = _mm256_castps_pd(_mm256_unpacklo_ps(r[2], r[3]));
  const __m256d high23 = _mm256_castps_pd(_mm256_unpackhi_ps(r[2], r[3]));
  turned[0] = _mm256_castpd_ps(_mm256_unpacklo_pd(low01, low23));    // t = 0 | 4
  turned[1] = _mm256_castpd_ps(_mm256_unpackhi_pd(low01, low23));    // t = 1 | 5
  turned[2] = _mm256_castpd_ps(_mm256_unpacklo_pd(high01, high23));  // t = 2 | 6
  turned[3] = _mm256_castpd_ps(_mm256_unpackhi_pd(high01, high23));  // t = 3 | 7
}

// The four numbers at t (0..7) of turn_four_rows' output, as float64.
inline __m256d turned_column(const __m256 turned[4], std::size_t t) {
  const __m256 v = turned[t % 4];
  return _mm256_cvtps_pd(t < 4 ? _mm256_castps256_ps128(v) : _mm256_extractf128_ps(v, 1));
}

// Stored rows j..j + 3 of b at k..k + 7, turned.
template <OperandType kType>
inline void four_rows(const MatrixOperand& b, std::size_t j, std::size_t k, __m256 turned[4]) {
  constexpr std::size_t size = stored_bytes<kType>();
  const unsigned char* at = b.stored + size * (j * b.stride + k);
  __m256 r[4];
  for (std::size_t q = 0; q < 4; ++q) {
    const unsigned char* row = at + q * size * b.stride;
    if constexpr (kType == OperandType::BF16)
      r[q] = _mm256_castsi256_ps(
          _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row))), 16));
    else if constexpr (kType == OperandType::F16)
      r[q] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row)));
    else
      r[q] = _mm256_loadu_ps(reinterpret_cast<const float*>(row));
  }
  turn_four_rows(r, turned);
}

// Eight sums, one per column j..j + 7: two 256-bit halves here, one 512-bit register in the
// AVX-512 build; what multiply_rows_eight_columns adds to and stores.
struct EightSums {
  __m256d low, high;
};
inline EightSums zero_sums() { return {_mm256_setzero_pd(), _mm256_setzero_pd()}; }
inline EightSums loaded_sums(const double* p) { return {_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4)}; }
inline void store_sums(double* p, EightSums v) {
  _mm256_storeu_pd(p, v.low);
  _mm256_storeu_pd(p + 4, v.high);
}
inline EightSums added(EightSums x, EightSums y) {
  return {_mm256_add_pd(x.low, y.low), _mm256_add_pd(x.high, y.high)};
}
// acc + x w, each lane one column
inline EightSums multiply_added(double x, EightSums w, EightSums acc) {
  const __m256d xs = _mm256_set1_pd(x);
  return {_mm256_fmadd_pd(xs, w.low, acc.low), _mm256_fmadd_pd(xs, w.high, acc.high)};
}
// The indices k a multiply_step takes.
constexpr std::size_t kTurnedStep = 8;

// acc[r] + a(i + r, k..k + 7) op(b)(k..k + 7, j..j + 7), one k after another: the first
// group of four stored rows (the low halves), then the second (their sums are apart).
template <OperandType kType, std::size_t kRows>
inline void multiply_step(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, std::size_t j, std::size_t k,
                          EightSums acc[kRows]) {
  const double* x = a.data + i * a.stride + k;
  for (std::size_t g = 0; g < 2; ++g) {
    __m256 turned[4];
    four_rows<kType>(b, j + 4 * g, k, turned);
#pragma GCC unroll 8
    for (std::size_t t = 0; t < 8; ++t) {
      const __m256d w = turned_column(turned, t);
      for (std::size_t r = 0; r < kRows; ++r) {
        __m256d& sum = g == 0 ? acc[r].low : acc[r].high;
        sum = _mm256_fmadd_pd(_mm256_set1_pd(x[r * a.stride + t]), w, sum);
      }
    }
  }
}
#endif

#if ATTN_PRODUCT_ISA == 2
// A transposed b stored narrower than float64 (F32, F16, BF16), in the AVX-512 build: eight
// of its stored rows (eight columns of op(b)) at a time, 32 indices k of each, widened to
// float32 and turned in registers, then to float64 one column at a time: a quarter of a
// shuffle a number, against three quarters in columns_of_four's four-lane version (which
// spent most of a generated Llama token in them); the sums are the same. What bounds it
// now is reading: about 10.5 GB/s a thread, each load a line of one of eight rows 4 KiB
// apart. (A BF16 route without the float32 conversion, the number's bits put in a float64
// as w 2^-896 and a scaled by 2^896, exact, cut the instructions by a third and the token
// by 3%, and slowed the prompt: not kept.)

// r[q] holds sixteen numbers of stored row q at the indices t = 0..15 of a half step;
// turned[m + 4 (t / 8)] holds, for t % 4 = m, the eight rows' numbers at t in its low
// half when t % 8 < 4, else in its high half (shuffles within 128-bit lanes, then across).
inline void turn_eight_rows(const __m512 r[8], __m512 turned[8]) {
  __m512d pairs[8];  // rows 2p, 2p + 1 interleaved: lane l holds t 4l, 4l + 1 (even), 4l + 2, 4l + 3 (odd)
  for (std::size_t p = 0; p < 4; ++p) {
    pairs[2 * p] = _mm512_castps_pd(_mm512_unpacklo_ps(r[2 * p], r[2 * p + 1]));
    pairs[2 * p + 1] = _mm512_castps_pd(_mm512_unpackhi_ps(r[2 * p], r[2 * p + 1]));
  }
  const __m512i low_lanes = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i high_lanes = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  for (std::size_t m = 0; m < 4; ++m) {
    __m512 quads[2];  // rows 4h..4h + 3 at t = 4l + m in lane l
    for (std::size_t h = 0; h < 2; ++h) {
      const __m512d x = pairs[4 * h + m / 2], y = pairs[4 * h + 2 + m / 2];
      quads[h] = _mm512_castpd_ps(m % 2 == 0 ? _mm512_unpacklo_pd(x, y) : _mm512_unpackhi_pd(x, y));
    }
    turned[m] = _mm512_permutex2var_ps(quads[0], low_lanes, quads[1]);       // t = m | 4 + m
    turned[4 + m] = _mm512_permutex2var_ps(quads[0], high_lanes, quads[1]);  // t = 8 + m | 12 + m
  }
}

// The eight numbers at t (0..15) of turn_eight_rows' output, as float64.
inline __m512d turned_column(const __m512 turned[8], std::size_t t) {
  const __m512 v = turned[t % 4 + 4 * (t / 8)];
  const __m256 half =
      t % 8 < 4 ? _mm512_castps512_ps256(v) : _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  return _mm512_cvtps_pd(half);
}

// Stored rows j..j + 7 of b at k..k + 31, turned: `first` and `second` each hold sixteen
// indices. BF16 reads each row's 32 numbers as sixteen 32-bit pairs: a pair shifted up a
// half is its low number as a float32, the pair with its low half cleared its high one (no
// shuffle), so `first` holds k + 2t and `second` k + 2t + 1. F32 and F16: k + t, k + 16 + t.
template <OperandType kType>
inline void eight_rows(const MatrixOperand& b, std::size_t j, std::size_t k, __m512 first[8], __m512 second[8]) {
  constexpr std::size_t size = stored_bytes<kType>();
  const unsigned char* at = b.stored + size * (j * b.stride + k);
  __m512 x[8], y[8];
  for (std::size_t q = 0; q < 8; ++q) {
    const unsigned char* row = at + q * size * b.stride;
    if constexpr (kType == OperandType::BF16) {
      const __m512i pairs = _mm512_loadu_si512(row);
      x[q] = _mm512_castsi512_ps(_mm512_slli_epi32(pairs, 16));
      y[q] = _mm512_castsi512_ps(_mm512_and_si512(pairs, _mm512_set1_epi32(static_cast<int>(0xffff0000U))));
    } else if constexpr (kType == OperandType::F16) {
      x[q] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row)));
      y[q] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 32)));
    } else {
      x[q] = _mm512_loadu_ps(row);
      y[q] = _mm512_loadu_ps(row + 64);
    }
  }
  turn_eight_rows(x, first);
  turn_eight_rows(y, second);
}

// Eight sums, one per column j..j + 7, in one register (EightSums of the AVX2 build).
using EightSums = __m512d;
inline EightSums zero_sums() { return _mm512_setzero_pd(); }
inline EightSums loaded_sums(const double* p) { return _mm512_loadu_pd(p); }
inline void store_sums(double* p, EightSums v) { _mm512_storeu_pd(p, v); }
inline EightSums added(EightSums x, EightSums y) { return _mm512_add_pd(x, y); }
inline EightSums multiply_added(double x, EightSums w, EightSums acc) {
  return _mm512_fmadd_pd(_mm512_set1_pd(x), w, acc);
}
constexpr std::size_t kTurnedStep = 32;

// acc[r] + a(i + r, k..k + 31) op(b)(k..k + 31, j..j + 7), one k after another (a float64,
// as stored: its row i + r at a.data + (i + r) a.stride).
template <OperandType kType, std::size_t kRows>
inline void multiply_step(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, std::size_t j, std::size_t k,
                          __m512d acc[kRows]) {
  const double* x = a.data + i * a.stride + k;
  __m512 first[8], second[8];
  eight_rows<kType>(b, j, k, first, second);
#pragma GCC unroll 32
  for (std::size_t q = 0; q < 32; ++q) {
    const bool odd = kType == OperandType::BF16 ? q % 2 == 1 : q >= 16;
    const __m512d w = turned_column(odd ? second : first, kType == OperandType::BF16 ? q / 2 : q % 16);
    for (std::size_t r = 0; r < kRows; ++r) acc[r] = _mm512_fmadd_pd(_mm512_set1_pd(x[r * a.stride + q]), w, acc[r]);
  }
}

#endif

#if ATTN_PRODUCT_ISA >= 1
// Rows i..i + kRows of c (ldc apart), columns j..j + 7, from a transposed b stored narrower
// than float64, kTurnedStep indices at a time: acc = 0, then acc + a(i,k) b(k,j) for k in
// order over each block of kKc, the blocks' sums added in order, as every kernel sums. The
// next eight stored rows are fetched meanwhile, 32 indices at a time. (Measured on
// Llama-1B's shapes in the AVX-512 build, a generated token: 163 ms without the fetch, 145
// with it, 148 fetching sixteen rows ahead; a second group of eight rows or a second block
// in flight, to hide the multiply-add's latency, was slower: 167 to 175 ms.)
template <OperandType kType, std::size_t kRows>
void multiply_rows_eight_columns(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, double* c,
                                 std::size_t ldc, std::size_t K, std::size_t P, std::size_t j) {
  const bool prefetch = j + 16 <= P;
  for (std::size_t k0 = 0; k0 < K; k0 += kKc) {
    const std::size_t k_end = smaller(K, k0 + kKc);
    EightSums acc[kRows];
    for (std::size_t r = 0; r < kRows; ++r) acc[r] = zero_sums();
    std::size_t k = k0;
    for (; k + kTurnedStep <= k_end; k += kTurnedStep) {
      if (prefetch && (k - k0) % 32 == 0) fetch_into_l2<kType>(b, j + 8, k);
      multiply_step<kType, kRows>(a, b, i, j, k, acc);
    }
    for (; k < k_end; ++k) {
      double column[8];
      for (std::size_t e = 0; e < 8; ++e) column[e] = element(b, k, j + e);
      const EightSums w = loaded_sums(column);
      for (std::size_t r = 0; r < kRows; ++r) acc[r] = multiply_added(a.data[(i + r) * a.stride + k], w, acc[r]);
    }
    for (std::size_t r = 0; r < kRows; ++r) {
      double* to = c + (i + r) * ldc + j;
      store_sums(to, k0 > 0 ? added(loaded_sums(to), acc[r]) : acc[r]);
    }
  }
}

// The most rows of a in one pass of the turned kernels: eight in 512-bit registers, four in
// AVX2's sixteen 256-bit ones (two accumulators a row, four for the turned numbers).
constexpr std::size_t kTurnedRows = ATTN_PRODUCT_ISA == 2 ? 8 : 4;

// Rows i..i + kRows of c from a transposed narrow b: eight columns at a time, the last few
// by the four-lane kernel.
template <OperandType kType, std::size_t kRows>
void multiply_rows_turned(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, double* c, std::size_t ldc,
                          std::size_t K, std::size_t P) {
  std::size_t j = 0;
  for (; j + 8 <= P; j += 8) multiply_rows_eight_columns<kType, kRows>(a, b, i, c, ldc, K, P, j);
  for (std::size_t r = 0; r < kRows && j < P; ++r) multiply_rows_transposed<kType, 1, 1>(a, b, i + r, c, ldc, K, P, j);
}

// Up to kTurnedRows rows from i in one pass over b (a short prompt's rows read each weight
// once): min(rows, kRows) of them, the number taken.
template <OperandType kType, std::size_t kRows = kTurnedRows>
std::size_t multiply_rows_turned(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, double* c,
                                 std::size_t ldc, std::size_t K, std::size_t P, std::size_t rows) {
  if constexpr (kRows > 1)
    if (rows < kRows) return multiply_rows_turned<kType, kRows - 1>(a, b, i, c, ldc, K, P, rows);
  multiply_rows_turned<kType, kRows>(a, b, i, c, ldc, K, P);
  return kRows;
}
#endif

// Whether a transposed b's stored rows, read at the same k, fall in few sets of the
// first-level cache: rows a multiple of 2 KiB apart (a set recurs every 4 KiB), as
// Llama's 2048 BF16 numbers are. Sixteen rows at once (four groups for one row of a) then
// put 8 or 16 in a set of 8 ways, evicting each other's lines before the next k read them:
// one row of a reads two groups instead (measured on Llama-1B's shapes: 0.57 s a generated
// token, against 0.83-0.95 s with four groups; GPT-2's head, 3 KiB apart, keeps four).
template <OperandType kType>
bool rows_share_cache_sets(const MatrixOperand& b) {
  return b.stride * stored_bytes<kType>() % 2048 == 0;
}

// Rows i..i + kRows of c by b's layout's kernel.
template <OperandType kType, std::size_t kRows>
void multiply_rows(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, double* c, std::size_t ldc,
                   std::size_t K, std::size_t P, double* sums) {
#if ATTN_PRODUCT_ISA >= 1
  if (b.transposed && kRows == 1 && rows_share_cache_sets<kType>(b))
    return multiply_rows_transposed<kType, 1, 2>(a, b, i, c, ldc, K, P);
  if (b.transposed) return multiply_rows_transposed<kType, kRows, 4 / kRows>(a, b, i, c, ldc, K, P);
#endif
  for (std::size_t j0 = 0; j0 < P; j0 += kChunk)
    multiply_rows_chunk<kType, kRows>(a, b, i, c, ldc, j0, smaller(kChunk, P - j0), K, sums);
}

// Four rows at a time while four are left, then two, then one. (The sums of 4 rows of a
// chunk fit the scratch when K >= 4, product_workspace's b block: fewer rows otherwise.)
template <OperandType kType>
bool multiply_few_rows_as(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                          std::size_t K, std::size_t P, double* sums) {
#if ATTN_PRODUCT_ISA == 0
  if (b.transposed) return false;
#else
  if constexpr (kType == OperandType::F32 || kType == OperandType::F16 || kType == OperandType::BF16)
    if (b.transposed && a.type == OperandType::Double && !a.transposed) {
      for (std::size_t i = 0; i < M;)
        i += multiply_rows_turned<kType>(a, b, i, c, ldc, K, P, smaller(M - i, kTurnedRows));
      return true;
    }
#endif
  for (std::size_t i = 0; i < M;) {
    const std::size_t left = smaller(M - i, K);
    if (left >= 4) {
      multiply_rows<kType, 4>(a, b, i, c, ldc, K, P, sums);
      i += 4;
    } else if (left >= 2) {
      multiply_rows<kType, 2>(a, b, i, c, ldc, K, P, sums);
      i += 2;
    } else {
      multiply_rows<kType, 1>(a, b, i, c, ldc, K, P, sums);
      i += 1;
    }
  }
  return true;
}

}  // namespace

bool multiply_few_rows(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                       std::size_t K, std::size_t P, double* sums) {
  if (b.panel) return false;  // read as stored rows here (product_panels_isa.cpp reads panels)
  return by_type(b.type, [&](auto t) { return multiply_few_rows_as<decltype(t)::kType>(a, b, c, ldc, M, K, P, sums); });
}

}  // namespace attn::ATTN_PRODUCT_NAMESPACE
