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

#include "kernels/product_isa_inline.h"

namespace attn::ATTN_PRODUCT_NAMESPACE {

namespace {

// Rows [i, i + height) (height <= kMr) and indices [k0, k0 + kc) of a float64 op(A) as one
// panel (kc, kMr) row-major, the rows past height zeros: each stored row (or, transposed,
// each stored row's run of height numbers) read in order, not number by number.
void pack_double_rows(const MatrixOperand& a, std::size_t i, std::size_t height, std::size_t k0, std::size_t kc,
                      double* out) {
  if (a.transposed) {
    for (std::size_t k = 0; k < kc; ++k) {
      const double* from = a.data + (k0 + k) * a.stride + i;
      for (std::size_t r = 0; r < kMr; ++r) out[k * kMr + r] = r < height ? from[r] : 0.0;
    }
    return;
  }
  for (std::size_t r = 0; r < kMr; ++r) {
    const double* from = a.data + (i + r) * a.stride + k0;
    if (r < height)
      for (std::size_t k = 0; k < kc; ++k) out[k * kMr + r] = from[k];
    else
      for (std::size_t k = 0; k < kc; ++k) out[k * kMr + r] = 0.0;
  }
}

// Rows [i0, i0 + rows) and indices [k0, k0 + kc) of op(A) as panels of kMr rows, each
// (kc, kMr) row-major; the rows past the last are zeros.
void pack_a(const MatrixOperand& a, std::size_t i0, std::size_t rows, std::size_t k0, std::size_t kc, double* out) {
  for (std::size_t panel = 0; panel < rows; panel += kMr, out += kc * kMr) {
    const std::size_t height = smaller(kMr, rows - panel);
    if (a.type == OperandType::Double && !a.panel) {  // float64 rows: copied, no number widened
      pack_double_rows(a, i0 + panel, height, k0, kc, out);
      continue;
    }
    for (std::size_t k = 0; k < kc; ++k)
      for (std::size_t r = 0; r < kMr; ++r) out[k * kMr + r] = r < height ? element(a, i0 + panel + r, k0 + k) : 0.0;
  }
}

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
    if (width == kNr && !b.transposed && !b.panel)
      for (; k < kc; ++k)
        for (std::size_t v = 0; v < kVecs; ++v)
          store(out + k * kNr + v * kLanes, load_stored<kType>(b, (k0 + k) * b.stride + j + v * kLanes));
#if ATTN_PRODUCT_ISA >= 1
    if (width == kNr && b.transposed && !b.panel)
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
  if (b.panel && M <= kPanelRows && multiply_panel_rows(a, b, c, ldc, M, K, P)) return;
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
