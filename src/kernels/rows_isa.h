// The elementwise and row kernels of the forward pass (softmax with its exp, the
// activations), compiled once per instruction set as the product kernel is (product_isa.h
// says why nothing may be shared between the copies): rows_isa.cpp is built three times,
// each copy in its own namespace; rows.cpp runs the one of the chosen instruction set. No
// Eigen and no C++ library template in them. Internal to src/kernels/.
#ifndef ATTN_KERNELS_ROWS_ISA_H_
#define ATTN_KERNELS_ROWS_ISA_H_

#include <cstddef>

// Declares one instruction set's kernels in namespace attn::NAME.
#define ATTN_DECLARE_ROW_KERNELS(NAME)                                                      \
  namespace attn::NAME {                                                                    \
  /* y[j] = exp(x[j] - shift) for j < n, 0 where x[j] - shift < -708 (rows.h) */            \
  void exp_shifted(const double* x, double shift, double* y, std::size_t n);                \
  /* rows.h's softmax_rows_fast on one thread; returns the rows with every key masked */    \
  std::size_t softmax_rows(const double* in, double* out, std::size_t rows, std::size_t T); \
  /* h[i] = max(h[i], 0) as h[i] > 0 ? h[i] : 0 */                                          \
  void relu(double* h, std::size_t n);                                                      \
  /* h[i] = silu(h[i]) = h[i] / (1 + exp(-h[i])) (rows.h) */                                \
  void silu(double* h, std::size_t n);                                                      \
  /* h[i] = PyTorch's gelu(h[i], approximate="tanh") as x / (1 + exp(-2u)) (rows.h) */      \
  void gelu_tanh(double* h, std::size_t n);                                                 \
  /* h[i] = PyTorch's exact gelu(h[i]), 0.5 x (1 + erf(x / sqrt 2)) (rows.h) */             \
  void gelu_erf(double* h, std::size_t n);                                                  \
  }

ATTN_DECLARE_ROW_KERNELS(rows_baseline)
ATTN_DECLARE_ROW_KERNELS(rows_avx2)
ATTN_DECLARE_ROW_KERNELS(rows_avx512)

#undef ATTN_DECLARE_ROW_KERNELS

#endif  // ATTN_KERNELS_ROWS_ISA_H_
