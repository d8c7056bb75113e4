// The large matrix product, most of a paper-sized run's time: attn's own blocked kernel
// (product_isa.cpp), compiled once per instruction set, the one this CPU runs best chosen
// at start-up (attn/product_kernel.h); attn train runs Eigen's (eigen_product.h). Internal
// to src/. It runs on one thread; matmul.h splits the work between threads.
#ifndef ATTN_KERNELS_MATRIX_KERNEL_H_
#define ATTN_KERNELS_MATRIX_KERNEL_H_

#include <cstddef>

namespace attn {

// An operand of c = op(a) @ op(b), for the backward pass's products (dW = Xᵀ·dY,
// dX = dY·Wᵀ) without a copy: op(a) is (M,K) and op(b) is (K,P), where a is stored
// row-major as (K,M) when transposed and b as (P,K); stride: elements between the rows of
// the matrix as stored.
//
// A weight left as a checkpoint stores it (attn/tensor.h's StoredMatrix) is an operand b
// of another type: its numbers at `stored`, any alignment, widened to float64 as they are
// packed (exact, so the sums are those of the widened matrix). `data` is then unused.
// A stored weight in panels (StoredMatrix::in_panels) has `panel` columns a panel and
// `stride` rows a panel, its first column the first of a panel.
enum class OperandType : unsigned char { Double, F64, F32, F16, BF16 };
struct MatrixOperand {
  const double* data;
  std::size_t stride;
  bool transposed;
  OperandType type = OperandType::Double;
  const unsigned char* stored = nullptr;
  std::size_t panel = 0;
};

// The builds of the kernel, by instruction set (the ones ATTN_CPU names), and Eigen's
// product, which attn train runs (eigen_product.h).
enum class ProductKernel { baseline, avx2, avx512, eigen };
constexpr ProductKernel kProductKernels[] = {ProductKernel::baseline, ProductKernel::avx2, ProductKernel::avx512};
constexpr ProductKernel kAllProductKernels[] = {ProductKernel::baseline, ProductKernel::avx2, ProductKernel::avx512,
                                                ProductKernel::eigen};
const char* name_of(ProductKernel kernel);
// Whether this CPU (and its operating system) runs the kernel's instructions.
bool cpu_runs(ProductKernel kernel);
// The kernel in use (chosen once at start-up, attn/product_kernel.h).
ProductKernel chosen_product_kernel();
// The instruction set of the row kernels (rows.h) that go with a product kernel: its own,
// or under Eigen's product (attn train) the best this CPU runs.
ProductKernel row_kernel_isa(ProductKernel kernel);

// C = A @ B for row-major A (M,K), B (K,P), C (M,P) whose rows are lda, ldb, ldc apart
// (so that a block of B's columns can be multiplied in place), by the chosen kernel.
// Small products never come here (steps/projection.h's matmul). The order of the sums is
// set by the sizes alone (product_isa.cpp), never by the addresses or the thread; with
// FMA (avx2, avx512) the last bits differ from the baseline's and from a plain sum.
void large_matrix_product(const double* a, std::size_t lda, const double* b, std::size_t ldb, double* c,
                          std::size_t ldc, std::size_t M, std::size_t K, std::size_t P);

// The same with either operand read transposed.
void large_matrix_product(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                          std::size_t K, std::size_t P);

// The same by a given kernel, which the CPU must run (the tests compare the kernels).
void large_matrix_product_by(ProductKernel kernel, const MatrixOperand& a, const MatrixOperand& b, double* c,
                             std::size_t ldc, std::size_t M, std::size_t K, std::size_t P);

}  // namespace attn

#endif  // ATTN_KERNELS_MATRIX_KERNEL_H_
