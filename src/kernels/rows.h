// The row and elementwise kernels of the forward pass, made fast: the softmax of many rows
// (its exp vectorized) and the activations (ReLU, SiLU, GELU and its tanh form), each
// compiled once per instruction set (rows_isa.h) and run by the one the product kernel uses
// (matrix_kernel.h: chosen at start-up from cpuid, ATTN_CPU forces one). What they compute
// is their steps' plain loops, which take every tensor below kExactMaxElements (the
// kernels take the larger ones): steps/attention.cpp's softmax_rows and
// steps/feed_forward.cpp's activate() (ReLU's kernel, the formula's bits, takes them all).
// Internal to src/.
#ifndef ATTN_KERNELS_ROWS_H_
#define ATTN_KERNELS_ROWS_H_

#include <cstddef>

#include "kernels/matrix_kernel.h"

namespace attn {

// in and out are (rows, T), row-major and apart -> out[r] = exp(in[r] - max) / sum, the
// row's maximum subtracted first; a row of -inf only (every key masked) gets zeros.
// Returns the number of such rows. The rows are split between the threads. Under Eigen's
// product (attn train) it is Eigen's softmax instead (eigen_softmax.h), which trained the
// shipped models.
//
// Differs from the reference loop in two ways, both within the rounding of a float64:
//  - exp is attn's own (rows_isa.cpp), within 0.52 ulp of the exact value, and at most one
//    ulp from glibc's std::exp (a sweep over [-708, 0] in tests/kernels/row_kernels_test.cpp
//    measures it); every element goes through the same operations, so a value never
//    depends on where the row sits in memory, nor on the instruction set: the three
//    builds of the kernel give the same bits (the tests check it);
//  - exp's argument is kept at or above -708, where exp is still a normal number, and the
//    entries below are set to 0: a subnormal result costs the CPU a micro-code assist (four
//    times slower here, where a randn model's huge scores put most of each row below -708).
//    So weights under exp(-708) = 3.3e-308 of the row's largest come out as 0 rather than
//    as subnormals.
// The row sum is NumPy's pairwise one, as in the reference.
std::size_t softmax_rows_fast(const double* in, double* out, std::size_t rows, std::size_t T);

// The attention's scores to its weights, each chunk of rows in one pass while it is in the
// cache, where the three steps one after the other would stream the (B,H,S,T) scores
// through memory three times: the same bits as scale, add the mask, softmax_rows_fast.
// Row r of the (rows, T) scores is query i = r % S of batch item r / (H·S).
struct ScoreRowsJob {
  const double* scores = nullptr;  // (rows, T)
  const double* mask = nullptr;    // (S, T), or (B, S, T) when per_batch; nullptr: no mask
  std::size_t rows = 0, T = 0, S = 1, H = 1;
  bool per_batch = false;
  double factor = 1.0;  // scaled = scores · factor, or scores / factor when divide
  bool divide = false;
  // (rows, T) each; masked unused without a mask (the softmax reads scaled). Both nullptr:
  // not kept (no one reads them; not with Eigen's softmax, which reads them after the pass).
  double* scaled = nullptr;
  double* masked = nullptr;
  double* weights = nullptr;  // (rows, T)
};
// What the pass saw besides the weights: the rows with every key masked (softmax_rows_fast's
// count), whether every score is finite, and whether every masked score is finite or -inf.
struct ScoreRowsSeen {
  std::size_t fully_masked = 0;
  bool scores_finite = true, masked_finite = true;
};
ScoreRowsSeen scores_to_weights_fast(const ScoreRowsJob& job);

// The activations in place, h[i] = act(h[i]) for i < n, by the given instruction set's build
// on one thread (steps/feed_forward.cpp runs the chosen one's on its tensors from
// kExactMaxElements elements, split between the threads):
// SiLU x / (1 + exp(-x)), and PyTorch's gelu(x, approximate="tanh"),
// 0.5 x (1 + tanh(u)) with u = sqrt(2/pi) (x + 0.044715 x^3), computed as the same
// function x / (1 + exp(-2u)) (1 + tanh(u) = 2 / (1 + exp(-2u))): no tanh, one exp and one
// division, as SiLU. The exp is the softmax's (exp_shifted_by's) made valid for any
// argument: clamped to [-708, 710], where exp(-708) = 3.3e-308 stands for all smaller
// values (1 + exp is 1 then, never a subnormal) and exp above 709.78 is inf, as std::exp,
// so x / inf = -0 for the most negative x, as the reference. The three builds give the
// same bits (the tests check it). Measured against the reference formulas with std::exp
// and std::tanh over tests/kernels/activation_kernels_test.cpp's sweep (5.2 million points
// over [-40, 40] and [-1, 1], with ±0, ±inf, NaN, huge, subnormal and exp-edge inputs):
//  - SiLU: within 3 ulps of x / (1 + std::exp(-x)) everywhere (the same signed zeros,
//    infinities and NaNs); 2.14 ulps at most from the exact value (the reference: 1.92);
//  - GELU-tanh: within 4 ulps of 0.5 x (1 + std::tanh(u)) from x = -1 up; below, the
//    reference's 1 + tanh(u) cancels, keeping only the absolute error of tanh(u) near -1
//    (up to 2^-53), and the two differ by at most 2 ulps of x; the kernel is the more
//    accurate one there. Where the reference's tanh(u) rounds to -1 (x < -7.2) it gives -0
//    and the kernel the true tiny value (-1.2e-37 at x = -10), -0 too from x = -21.2 down.
void silu_by(ProductKernel kernel, double* h, std::size_t n);
void gelu_tanh_by(ProductKernel kernel, double* h, std::size_t n);
// h[i] = PyTorch's exact gelu(h[i]), 0.5 x (1 + erf(x / sqrt 2)), for i < n, one thread,
// erf computed as glibc's (FDLIBM's pieces, their sums in the same order; the exp attn's).
// Over the same sweep, against the reference with std::erf (glibc 2.36): the same bits
// for x in [-1.19, 1.77) (z = x / sqrt 2 in (-0.84375, 1.25), the pieces without an exp),
// and the same zeros, infinities and NaNs; from 1.77 up within 1 ulp (erfc's exp differs,
// and 1 - erfc rounds the other way now and then: 5 values in tests/steps/feed_forward_
// test.cpp's random 1M, none in the sweep). Below -1.19, 1 + erf(z) is erfc(|z|) computed
// directly, not 1 - erf(|z|), which cancels in the reference: the two differ by at most
// 0.3125 ulp of x (0.5 in theory: half an ulp of erf near -1, times x / 2), the kernel the
// more accurate one (13 ulps from the exact value over [-3, -1.77], the reference 103).
// Where the reference's erf rounds to -1 (x < -8.3) it gives -0 and the kernel the true
// tiny value (-7.6e-23 at x = -10), -0 too from x = -37.5 down. SSE2's build computes
// each element's piece only, branching; AVX2's and AVX-512's compute every piece, kept by
// selects, vectorized, the elements that need erfc's exps (|x| from 1.767 to 8.5 or 37.5)
// in a pass of their own: the same operations on each value, the same bits.
void gelu_erf_by(ProductKernel kernel, double* h, std::size_t n);

// By a given instruction set's build, which the CPU must run (the tests compare them; Eigen's
// is not one: ProductKernel::eigen runs the best the CPU has). One thread.
std::size_t softmax_rows_by(ProductKernel kernel, const double* in, double* out, std::size_t rows, std::size_t T);
// y[j] = exp(x[j] - shift), 0 where x[j] - shift < -708: the softmax's exp.
void exp_shifted_by(ProductKernel kernel, const double* x, double shift, double* y, std::size_t n);
void relu_by(ProductKernel kernel, double* h, std::size_t n);

}  // namespace attn

#endif  // ATTN_KERNELS_ROWS_H_
