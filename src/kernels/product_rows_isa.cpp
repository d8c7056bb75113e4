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
      for (std::size_t j = 0; j < whole; j += kLanes) {
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
// apart): kGroups groups of four columns of op(b) at a time, each group's stored rows read
// along (columns_of_four) and used by every row of a. A group's block of k done, its sums
// are written, then the next block's.
template <OperandType kType, std::size_t kRows, std::size_t kGroups>
void multiply_rows_transposed(const MatrixOperand& a, const MatrixOperand& b, std::size_t i, double* c, std::size_t ldc,
                              std::size_t K, std::size_t P) {
  constexpr std::size_t kStep = 4 * kGroups;
  std::size_t j = 0;
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

#endif

// Whether a transposed b's stored rows, read at the same k, fall in few sets of the
// first-level cache: rows a multiple of 2 KiB apart (a set recurs every 4 KiB), as
// Llama's 2048 BF16 numbers are. Sixteen rows at once (four groups for one row of a) then
// put 8 or 16 in a set of 8 ways, evicting each other's lines before the next k read them:
// one row of a reads two groups instead (measured on Llama-1B's shapes: 0.57 s a generated
// token, against 0.83-0.95 s with four groups; GPT-2's head, 3 KiB apart, keeps four).
template <OperandType kType>
bool rows_share_cache_sets(const MatrixOperand& b) {
  constexpr std::size_t kBytes = kType == OperandType::F32                                 ? 4
                                 : kType == OperandType::F16 || kType == OperandType::BF16 ? 2
                                                                                           : 8;
  return b.stride * kBytes % 2048 == 0;
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
  return by_type(b.type, [&](auto t) { return multiply_few_rows_as<decltype(t)::kType>(a, b, c, ldc, M, K, P, sums); });
}

}  // namespace attn::ATTN_PRODUCT_NAMESPACE
