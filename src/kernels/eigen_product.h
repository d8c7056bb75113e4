// Eigen's blocked product, the large product attn ran before its own kernels, kept for
// attn train: data/examples/trained_*.json were trained with it, and a trained file
// retrains byte for byte only under the kernel that trained it (attn/product_kernel.h).
// Compiled as it always was (CMakeLists.txt: clang++ when installed, the build's own
// instruction set), never per instruction set. Internal to src/kernels/.
#ifndef ATTN_KERNELS_EIGEN_PRODUCT_H_
#define ATTN_KERNELS_EIGEN_PRODUCT_H_

#include <cstddef>

#include "kernels/matrix_kernel.h"

namespace attn {

// C (M,P), rows ldc apart, = op(a) (M,K) @ op(b) (K,P) by Eigen's one-thread product. Its
// order of sums follows the sizes and the vector width it was compiled for (SSE2 in the
// portable build), never the addresses.
// Eigen's blocking for the rest of the process as on a CPU with a 48 KiB L1 data cache,
// whatever this one has: Eigen splits a product's depth K into blocks it sizes from the
// caches it finds (above 504 on a 32 KiB L1, above 760 on a 48 KiB one), and each split
// adds the partial sums in another order, so the same training would give other last bits
// on another CPU. data/examples/trained_*.json were trained with these sizes.
void fix_eigen_blocking();

void eigen_product(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                   std::size_t K, std::size_t P);

}  // namespace attn

#endif  // ATTN_KERNELS_EIGEN_PRODUCT_H_
