#include "kernels/matmul.h"

#include <algorithm>

#include "kernels/matrix_kernel.h"
#include "kernels/parallel.h"

namespace attn {

std::size_t product_pieces(std::size_t M, std::size_t K, std::size_t P) {
  if (P < 16 || M * K * P < kParallelMinElements) return 1;
  return std::min(kMaxProductPieces, std::max<std::size_t>(2, P / kProductPieceColumns));
}

void matmul_fast(const double* a, const double* b, double* c, std::size_t M, std::size_t K, std::size_t P) {
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

void batched_matmul_fast(const double* a, const double* b, double* c, std::size_t batches, std::size_t M, std::size_t K,
                         std::size_t P) {
#pragma omp parallel for schedule(static) if (batches > 1 && M * K * P * batches >= kParallelMinElements)
  for (std::size_t i = 0; i < batches; ++i)
    large_matrix_product(a + i * M * K, K, b + i * K * P, P, c + i * M * P, P, M, K, P);
}

}  // namespace attn
