#include "kernels/rows.h"

#include <limits>

#include "attn/tensor.h"
#include "core/numeric_check.h"

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

namespace {

const double* softmax_input(const ScoreRowsJob& job) { return job.mask ? job.masked : job.scaled; }

// Rows [first, first + n) of the job: scaled, masked (with a mask), then their softmax.
// Returns the fully masked rows; clears *seen's flags on a value that is not finite. With
// job.scaled nullptr the scaled and masked rows go to `scratch` (n rows of each), read
// back by the softmax while they are in the core's cache.
std::size_t score_rows(ProductKernel kernel, const ScoreRowsJob& job, std::size_t first, std::size_t n,
                       ScoreRowsSeen& seen, TensorData& scratch) {
  const std::size_t T = job.T;
  if (!job.scaled) scratch.resize(2 * n * T);
  double* const scaled_rows = job.scaled ? job.scaled + first * T : scratch.data();
  double* const masked_rows = !job.mask ? nullptr : job.scaled ? job.masked + first * T : scratch.data() + n * T;
  // (a masked score may be -inf: it is compared with +inf instead)
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  bool scores_finite = true, masked_finite = true;
  for (std::size_t r = first; r < first + n; ++r) {
    const double* in = job.scores + r * T;
    double* scaled = scaled_rows + (r - first) * T;
    scores_finite = scores_finite && all_finite(in, T);
    if (job.divide)
      for (std::size_t j = 0; j < T; ++j) scaled[j] = in[j] / job.factor;
    else
      for (std::size_t j = 0; j < T; ++j) scaled[j] = in[j] * job.factor;
    if (!job.mask) continue;
    const std::size_t query = r % job.S, item = r / (job.H * job.S);
    const double* m = job.mask + ((job.per_batch ? item * job.S : 0) + query) * T;
    double* masked = masked_rows + (r - first) * T;
    bool below_infinity = true;
    for (std::size_t j = 0; j < T; ++j) {
      masked[j] = scaled[j] + m[j];
      below_infinity &= masked[j] < kInfinity;  // false for +inf and NaN, true for -inf
    }
    masked_finite = masked_finite && below_infinity;
  }
  if (!scores_finite) seen.scores_finite = false;
  if (!masked_finite) seen.masked_finite = false;
  if (kernel == ProductKernel::eigen) return 0;  // Eigen's softmax takes every row after the pass
  return softmax_rows_by(kernel, job.mask ? masked_rows : scaled_rows, job.weights + first * T, n, T);
}

}  // namespace

ScoreRowsSeen scores_to_weights_fast(const ScoreRowsJob& job) {
  ScoreRowsSeen seen;
  if (job.T == 0) return seen;
  const ProductKernel kernel = chosen_product_kernel();
  std::size_t masked = 0;
  bool scores_finite = true, masked_finite = true;
  // Chunks of 16 rows, as softmax_rows_fast's: a row's numbers never depend on the thread.
#pragma omp parallel for schedule(static) reduction(+ : masked) reduction(&& : scores_finite, masked_finite) \
    if (job.rows * job.T >= kParallelMinElements)
  for (std::size_t r = 0; r < job.rows; r += 16) {
    ScoreRowsSeen chunk;
    thread_local TensorData scratch;
    masked += score_rows(kernel, job, r, job.rows - r < 16 ? job.rows - r : 16, chunk, scratch);
    scores_finite = scores_finite && chunk.scores_finite;
    masked_finite = masked_finite && chunk.masked_finite;
  }
  if (kernel == ProductKernel::eigen) masked = softmax_rows_eigen(softmax_input(job), job.weights, job.rows, job.T);
  seen.fully_masked = masked;
  seen.scores_finite = scores_finite;
  seen.masked_finite = masked_finite;
  return seen;
}

}  // namespace attn
