// The inner loops of a paper-sized run, in a file of their own so that the build can
// compile them with the compiler that makes the fastest code of them (CMakeLists.txt:
// clang++ when installed). Internal to src/. Each runs on one thread; the callers split
// the work between threads.
#ifndef ATTN_SRC_MATRIX_KERNEL_H_
#define ATTN_SRC_MATRIX_KERNEL_H_

#include <cstddef>

namespace attn {

// C = A @ B for row-major A (M,K), B (K,P), C (M,P) whose rows are lda, ldb, ldc apart
// (so that a block of B's columns can be multiplied in place), by Eigen's blocked kernels.
// Uses FMA where the CPU has it, so the last bits differ from a plain sum; small products
// never come here (attention.cpp).
void large_matrix_product(const double* a, std::size_t lda, const double* b, std::size_t ldb, double* c,
                          std::size_t ldc, std::size_t M, std::size_t K, std::size_t P);

// out[j] = exp(in[j] - max) for j < T by Eigen's vectorized exp, with 0 where
// in[j] - max < -708 (see softmax_rows in attention.cpp for why).
void shifted_exp_row(const double* in, double* out, std::size_t T, double max);

}  // namespace attn

#endif  // ATTN_SRC_MATRIX_KERNEL_H_
