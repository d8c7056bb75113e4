#include "kernels/matrix_kernel.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "attn/error.h"
#include "attn/product_kernel.h"
#include "kernels/eigen_product.h"
#include "kernels/product_isa.h"

namespace attn {

namespace {

// F16C (the binary16 conversion the AVX2 kernels widen F16 weights with): CPUID leaf 1,
// ECX bit 29, read directly since clang 14's __builtin_cpu_supports does not know "f16c".
bool cpu_has_f16c() {
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1U << 29)) != 0;
}

ProductKernel best_kernel() {
  if (cpu_runs(ProductKernel::avx512)) return ProductKernel::avx512;
  if (cpu_runs(ProductKernel::avx2)) return ProductKernel::avx2;
  return ProductKernel::baseline;
}

// The kernel ATTN_CPU names when the CPU runs it, else the best it runs. (main refuses a
// bad ATTN_CPU before anything runs, through choose_product_kernel.)
ProductKernel kernel_from_environment() {
  const char* request = std::getenv("ATTN_CPU");
  for (const ProductKernel kernel : kProductKernels)
    if (request != nullptr && std::strcmp(request, name_of(kernel)) == 0 && cpu_runs(kernel)) return kernel;
  return best_kernel();
}

// The kernel in use, chosen once, at start-up, before any thread runs a product.
ProductKernel& chosen_kernel() {
  static ProductKernel kernel = kernel_from_environment();
  return kernel;
}

// Each thread's scratch for the packed blocks, kept between products (a fresh block per
// product would be mapped and faulted in again each time), 64-byte aligned.
struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
double* workspace(std::size_t doubles) {
  thread_local std::unique_ptr<double, FreeDeleter> buffer;
  thread_local std::size_t capacity = 0;
  if (doubles > capacity) {
    const std::size_t bytes = (doubles * sizeof(double) + 63) / 64 * 64;
    buffer.reset(static_cast<double*>(std::aligned_alloc(64, bytes)));
    if (!buffer) throw std::bad_alloc();
    capacity = bytes / sizeof(double);
  }
  return buffer.get();
}

}  // namespace

const char* name_of(ProductKernel kernel) {
  switch (kernel) {
    case ProductKernel::avx512:
      return "avx512";
    case ProductKernel::avx2:
      return "avx2";
    case ProductKernel::eigen:
      return "eigen";
    case ProductKernel::baseline:
      break;
  }
  return "baseline";
}

bool cpu_runs(ProductKernel kernel) {
  // GCC's and clang's cpuid checks also ask the operating system whether it saves the
  // wide registers (xgetbv), so a kernel the OS cannot run is never taken.
  switch (kernel) {
    case ProductKernel::avx512:
      return __builtin_cpu_supports("avx512f");
    case ProductKernel::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
    case ProductKernel::eigen:  // built for the build's own instruction set, as the rest of attn
    case ProductKernel::baseline:
      break;
  }
  return true;
}

ProductKernel chosen_product_kernel() { return chosen_kernel(); }

ProductKernel row_kernel_isa(ProductKernel kernel) { return kernel == ProductKernel::eigen ? best_kernel() : kernel; }

const char* product_kernel_name() { return name_of(chosen_kernel()); }

void use_training_product_kernel() {
  chosen_kernel() = ProductKernel::eigen;
  fix_eigen_blocking();
}

std::optional<std::string> choose_product_kernel(const char* request) {
  if (request == nullptr || *request == '\0') {
    chosen_kernel() = best_kernel();
    return std::nullopt;
  }
  for (const ProductKernel kernel : kProductKernels) {
    if (std::strcmp(request, name_of(kernel)) != 0) continue;
    if (!cpu_runs(kernel))
      return "attn: ATTN_CPU=" + std::string(request) + ": this CPU lacks the instructions of the " + request +
             " kernel (it runs: " + (cpu_runs(ProductKernel::avx2) ? "baseline, avx2" : "baseline") + ")";
    chosen_kernel() = kernel;
    return std::nullopt;
  }
  return printable("attn: ATTN_CPU=" + std::string(request) +
                   ": expected baseline, avx2 or avx512 (or unset: the best this CPU runs)");
}

void large_matrix_product_by(ProductKernel kernel, const MatrixOperand& a, const MatrixOperand& b, double* c,
                             std::size_t ldc, std::size_t M, std::size_t K, std::size_t P) {
  switch (kernel) {
    case ProductKernel::avx512:
      return product_avx512::product(a, b, c, ldc, M, K, P, workspace(product_avx512::product_workspace(M, K, P)));
    case ProductKernel::avx2:
      return product_avx2::product(a, b, c, ldc, M, K, P, workspace(product_avx2::product_workspace(M, K, P)));
    case ProductKernel::eigen:
      // attn train's: its weights are float64 (a stored weight never reaches training)
      if (a.type != OperandType::Double || b.type != OperandType::Double)
        throw InternalError("large_matrix_product: Eigen's product reads float64 operands only");
      return eigen_product(a, b, c, ldc, M, K, P);
    case ProductKernel::baseline:
      break;
  }
  product_baseline::product(a, b, c, ldc, M, K, P, workspace(product_baseline::product_workspace(M, K, P)));
}

void large_matrix_product(const MatrixOperand& a, const MatrixOperand& b, double* c, std::size_t ldc, std::size_t M,
                          std::size_t K, std::size_t P) {
  large_matrix_product_by(chosen_kernel(), a, b, c, ldc, M, K, P);
}

void large_matrix_product(const double* a, std::size_t lda, const double* b, std::size_t ldb, double* c,
                          std::size_t ldc, std::size_t M, std::size_t K, std::size_t P) {
  large_matrix_product(MatrixOperand{a, lda, false}, MatrixOperand{b, ldb, false}, c, ldc, M, K, P);
}

}  // namespace attn
