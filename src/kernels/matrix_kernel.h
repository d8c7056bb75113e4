// The large matrix product, most of a paper-sized run's time, in a file of its own so
// that the build can compile it with the compiler that makes the fastest code of it
// (CMakeLists.txt: clang++ when installed). Internal to src/. It runs on one thread;
// matmul.h splits the work between threads. (The softmax's vectorized exp was tried here
// too and ran 10-20% slower compiled by clang, so it stays in softmax.cpp, built by g++.)
#ifndef ATTN_KERNELS_MATRIX_KERNEL_H_
#define ATTN_KERNELS_MATRIX_KERNEL_H_

#include <cstddef>

namespace attn {

// C = A @ B for row-major A (M,K), B (K,P), C (M,P) whose rows are lda, ldb, ldc apart
// (so that a block of B's columns can be multiplied in place), by Eigen's blocked kernels.
// Uses FMA where the CPU has it, so the last bits differ from a plain sum; small products
// never come here (steps/projection.h's matmul). The result depends on the sizes and the
// CPU only: Eigen packs both operands into aligned buffers before multiplying, and the
// order of the sums follows the indices, not the addresses.
void large_matrix_product(const double* a, std::size_t lda, const double* b, std::size_t ldb, double* c,
                          std::size_t ldc, std::size_t M, std::size_t K, std::size_t P);

// The same with either operand read transposed, for the backward pass (dW = Xᵀ·dY,
// dX = dY·Wᵀ) without a copy: op(a) is (M,K) and op(b) is (K,P), where a is stored
// row-major as (K,M) when a_transposed (rows lda apart) and b as (P,K) when b_transposed.
// Eigen packs a transposed operand as it packs any other, so the result, too, depends on
// the sizes and the CPU only.
struct MatrixOperand {
  const double* data;
  std::size_t stride;  // elements between the rows of the matrix as stored
  bool transposed;
};
void large_matrix_product(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                          std::size_t K, std::size_t P);

}  // namespace attn

#endif  // ATTN_KERNELS_MATRIX_KERNEL_H_
