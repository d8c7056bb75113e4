// The softmax of many rows by Eigen's vectorized exp: what rows.h's softmax_rows_fast ran
// before the row kernels were compiled per instruction set, kept for attn train (whose
// product is Eigen's too, eigen_product.h): the shipped trained models retrain byte for
// byte only from the code that trained them. Internal to src/kernels/.
#ifndef ATTN_KERNELS_EIGEN_SOFTMAX_H_
#define ATTN_KERNELS_EIGEN_SOFTMAX_H_

#include <cstddef>

namespace attn {

// rows.h's softmax_rows_fast, but exp is Eigen's (within an ulp or two of glibc's) for the
// build's target (SSE2 in a portable build), its packets from each row's first element and
// the last partial packet through a padded copy; the same clamp at -708. Splits the rows
// between the threads.
std::size_t softmax_rows_eigen(const double* in, double* out, std::size_t rows, std::size_t T);

}  // namespace attn

#endif  // ATTN_KERNELS_EIGEN_SOFTMAX_H_
