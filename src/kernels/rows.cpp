#include "kernels/rows.h"

#include "kernels/eigen_softmax.h"
#include "kernels/parallel.h"
#include "kernels/rows_isa.h"

namespace attn {

std::size_t softmax_rows_by(ProductKernel kernel, const double* in, double* out, std::size_t rows, std::size_t T) {
  switch (row_kernel_isa(kernel)) {
    case ProductKernel::avx512:
      return rows_avx512::softmax_rows(in, out, rows, T);
    case ProductKernel::avx2:
      return rows_avx2::softmax_rows(in, out, rows, T);
    default:
      return rows_baseline::softmax_rows(in, out, rows, T);
  }
}

void exp_shifted_by(ProductKernel kernel, const double* x, double shift, double* y, std::size_t n) {
  switch (row_kernel_isa(kernel)) {
    case ProductKernel::avx512:
      return rows_avx512::exp_shifted(x, shift, y, n);
    case ProductKernel::avx2:
      return rows_avx2::exp_shifted(x, shift, y, n);
    default:
      return rows_baseline::exp_shifted(x, shift, y, n);
  }
}

void relu_by(ProductKernel kernel, double* h, std::size_t n) {
  switch (row_kernel_isa(kernel)) {
    case ProductKernel::avx512:
      return rows_avx512::relu(h, n);
    case ProductKernel::avx2:
      return rows_avx2::relu(h, n);
    default:
      return rows_baseline::relu(h, n);
  }
}

void silu_by(ProductKernel kernel, double* h, std::size_t n) {
  switch (row_kernel_isa(kernel)) {
    case ProductKernel::avx512:
      return rows_avx512::silu(h, n);
    case ProductKernel::avx2:
      return rows_avx2::silu(h, n);
    default:
      return rows_baseline::silu(h, n);
  }
}

void gelu_tanh_by(ProductKernel kernel, double* h, std::size_t n) {
  switch (row_kernel_isa(kernel)) {
    case ProductKernel::avx512:
      return rows_avx512::gelu_tanh(h, n);
    case ProductKernel::avx2:
      return rows_avx2::gelu_tanh(h, n);
    default:
      return rows_baseline::gelu_tanh(h, n);
  }
}

void gelu_erf_by(ProductKernel kernel, double* h, std::size_t n) {
  switch (row_kernel_isa(kernel)) {
    case ProductKernel::avx512:
      return rows_avx512::gelu_erf(h, n);
    case ProductKernel::avx2:
      return rows_avx2::gelu_erf(h, n);
    default:
      return rows_baseline::gelu_erf(h, n);
  }
}

std::size_t softmax_rows_fast(const double* in, double* out, std::size_t rows, std::size_t T) {
  if (T == 0) return 0;
  const ProductKernel kernel = chosen_product_kernel();
  if (kernel == ProductKernel::eigen) return softmax_rows_eigen(in, out, rows, T);  // attn train's
  std::size_t masked = 0;
  // Chunks of whole rows, each computed as if alone: a row's numbers never depend on the thread.
#pragma omp parallel for schedule(static) reduction(+ : masked) if (rows * T >= kParallelMinElements)
  for (std::size_t r = 0; r < rows; r += 16) {
    const std::size_t n = rows - r < 16 ? rows - r : 16;
    masked += softmax_rows_by(kernel, in + r * T, out + r * T, n, T);
  }
  return masked;
}

}  // namespace attn
