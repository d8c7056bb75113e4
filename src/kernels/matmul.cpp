#include "kernels/matmul.h"

#include <algorithm>
#include <chrono>

#include "attn/product_kernel.h"
#include "kernels/matrix_kernel.h"
#include "kernels/parallel.h"

namespace attn {

namespace {

// The large products' totals (attn/product_kernel.h). The steps call the functions below
// from one thread, outside any parallel region, so plain sums suffice.
ProductTotals totals;

// Adds the wall time of one call and its 2 M K P operations per batch item to the totals.
class TimedProduct {
 public:
  TimedProduct(std::size_t batches, std::size_t M, std::size_t K, std::size_t P)
      : started_(std::chrono::steady_clock::now()), flops_(2.0 * batches * M * K * P) {}
  ~TimedProduct() {
    totals.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    totals.flops += flops_;
  }
  TimedProduct(const TimedProduct&) = delete;
  TimedProduct& operator=(const TimedProduct&) = delete;

 private:
  std::chrono::steady_clock::time_point started_;
  double flops_;
};

}  // namespace

ProductTotals product_totals() { return totals; }

std::size_t product_pieces(std::size_t M, std::size_t K, std::size_t P) {
  if (P < 16) return 1;
  if (M < kFewRows) {
    if (K * P < kFewRowsParallelMinWeights) return 1;
    const std::size_t pieces = std::min(kMaxProductPieces, std::max<std::size_t>(2, P / kFewRowsPieceColumns));
    return pieces + pieces % 2;
  }
  if (M * K * P < kParallelMinElements) return 1;
  return std::min(kMaxProductPieces, std::max<std::size_t>(2, P / kProductPieceColumns));
}

void matmul_fast(const double* a, const double* b, double* c, std::size_t M, std::size_t K, std::size_t P) {
  const TimedProduct timed(1, M, K, P);
  const std::size_t pieces = product_pieces(M, K, P);
  if (pieces == 1) {
    large_matrix_product(a, K, b, P, c, P, M, K, P);
    return;
  }
#pragma omp parallel for schedule(static, 1)
  for (std::size_t piece = 0; piece < pieces; ++piece) {
    const std::size_t first = P * piece / pieces, count = P * (piece + 1) / pieces - first;
    large_matrix_product(a, K, b + first, P, c + first, P, M, K, count);
  }
}

MatrixOperand stored_operand(const StoredMatrix& b, std::size_t first) {
  MatrixOperand m{nullptr, b.stride, b.transposed};
  switch (b.type) {
    case StoredType::F64:
      m.type = OperandType::F64;
      break;
    case StoredType::F32:
      m.type = OperandType::F32;
      break;
    case StoredType::F16:
      m.type = OperandType::F16;
      break;
    case StoredType::BF16:
      m.type = OperandType::BF16;
      break;
  }
  m.panel = b.panel;
  if (b.panel)  // first is a panel's first column (matmul_stored_fast)
    m.stored = b.bytes + stored_type_bytes(b.type) * first * b.stride;
  else
    m.stored = b.bytes + stored_type_bytes(b.type) * (b.transposed ? first * b.stride : first);
  return m;
}

void matmul_stored_fast(const double* a, const StoredMatrix& b, double* c, std::size_t M, std::size_t K,
                        std::size_t P) {
  // cut as matmul_fast cuts (which changes no sum: each element's sums run along K)
  const TimedProduct timed(1, M, K, P);
  // (a transposed view of panels, never a forward's operand, in one piece: its columns are not panels)
  const std::size_t pieces = b.panel && b.transposed ? 1 : product_pieces(M, K, P);
  const MatrixOperand A{a, K, false};
  if (pieces == 1) {
    large_matrix_product(A, stored_operand(b, 0), c, P, M, K, P);
    return;
  }
  // in panels, each piece starts at a panel (which changes no sum either)
  const std::size_t align = b.panel ? b.panel : 1;
  const auto start = [&](std::size_t piece) { return piece == pieces ? P : P * piece / pieces / align * align; };
#pragma omp parallel for schedule(static, 1)
  for (std::size_t piece = 0; piece < pieces; ++piece) {
    const std::size_t first = start(piece), count = start(piece + 1) - first;
    if (count > 0) large_matrix_product(A, stored_operand(b, first), c + first, P, M, K, count);
  }
}

void batched_matmul_fast(const double* a, const double* b, double* c, std::size_t batches, std::size_t M, std::size_t K,
                         std::size_t P) {
  const TimedProduct timed(batches, M, K, P);
#pragma omp parallel for schedule(static) if (batches > 1 && M * K * P * batches >= kParallelMinElements)
  for (std::size_t i = 0; i < batches; ++i)
    large_matrix_product(a + i * M * K, K, b + i * K * P, P, c + i * M * P, P, M, K, P);
}

namespace {

// Columns [first, first + count) of c = op(a) @ op(b): a is read whole, b from its column
// `first` (row `first` of the stored transpose).
void transposed_block(const double* a, const double* b, Transposes t, double* c, std::size_t M, std::size_t K,
                      std::size_t P, std::size_t first, std::size_t count) {
  const MatrixOperand A{a, t.a ? M : K, t.a};
  const MatrixOperand B{t.b ? b + first * K : b + first, t.b ? K : P, t.b};
  large_matrix_product(A, B, c + first, P, M, K, count);
}

}  // namespace

void matmul_transposed_fast(const double* a, const double* b, Transposes t, double* c, std::size_t M, std::size_t K,
                            std::size_t P) {
  const TimedProduct timed(1, M, K, P);
  if (P < 16 || M * K * P < kParallelMinElements) {
    transposed_block(a, b, t, c, M, K, P, 0, P);
    return;
  }
#pragma omp parallel for num_threads(2) schedule(static, 1)
  for (std::size_t part = 0; part < 2; ++part) {
    const std::size_t first = P * part / 2, count = P * (part + 1) / 2 - first;
    transposed_block(a, b, t, c, M, K, P, first, count);
  }
}

void batched_matmul_transposed_fast(const double* a, const double* b, Transposes t, double* c, std::size_t batches,
                                    std::size_t M, std::size_t K, std::size_t P) {
  const TimedProduct timed(batches, M, K, P);
#pragma omp parallel for schedule(static) if (batches > 1 && M * K * P * batches >= kParallelMinElements)
  for (std::size_t i = 0; i < batches; ++i)
    transposed_block(a + i * M * K, b + i * K * P, t, c + i * M * P, M, K, P, 0, P);
}

}  // namespace attn
