// attn's own large matrix product, compiled once per instruction set: product_isa.cpp is
// built three times (src/kernels/CMakeLists.txt), each object with its own compiler flags
// and its own namespace, so that the three copies never share a symbol. No Eigen and no
// C++ library template is instantiated in them: an inline function compiled for AVX-512
// and for SSE2 under one name would break the one-definition rule, and the linker could
// keep the AVX-512 copy for the baseline path (docs/performance.md). matrix_kernel.cpp,
// built for the baseline, chooses one at start-up. Internal to src/kernels/.
#ifndef ATTN_KERNELS_PRODUCT_ISA_H_
#define ATTN_KERNELS_PRODUCT_ISA_H_

#include <cstddef>

#include "kernels/matrix_kernel.h"

// Declares one instruction set's kernel in namespace attn::NAME.
#define ATTN_DECLARE_PRODUCT_KERNEL(NAME)                                                                     \
  namespace attn::NAME {                                                                                      \
  /* Doubles of scratch the product of these sizes needs (the packed blocks of a and b). */                   \
  std::size_t product_workspace(std::size_t M, std::size_t K, std::size_t P);                                 \
  /* C (M,P), rows ldc apart, = op(a) (M,K) @ op(b) (K,P); workspace holds product_workspace doubles, 64-byte \
     aligned. */                                                                                              \
  void product(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,     \
               std::size_t K, std::size_t P, double* workspace);                                              \
  }

ATTN_DECLARE_PRODUCT_KERNEL(product_baseline)
ATTN_DECLARE_PRODUCT_KERNEL(product_avx2)
ATTN_DECLARE_PRODUCT_KERNEL(product_avx512)

#undef ATTN_DECLARE_PRODUCT_KERNEL

#endif  // ATTN_KERNELS_PRODUCT_ISA_H_
