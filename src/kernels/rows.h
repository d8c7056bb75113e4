// The row and elementwise kernels of the forward pass, made fast: the softmax of many rows
// (its exp vectorized) and ReLU, each compiled once per instruction set (rows_isa.h) and
// run by the one the product kernel uses (matrix_kernel.h: chosen at start-up from cpuid,
// ATTN_CPU forces one). What they compute is their steps' plain loops: steps/attention.cpp's
// softmax_rows, whose reference loop takes every tensor below kExactMaxElements (this kernel
// takes the larger ones), and steps/feed_forward.cpp's activation. Internal to src/.
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

// h[i] = max(h[i], 0) for i < n, as h[i] > 0 ? h[i] : 0 (a NaN becomes 0, as the
// reference's comparison makes it); large tensors are split between the threads.
void relu_in_place(double* h, std::size_t n);

// By a given instruction set's build, which the CPU must run (the tests compare them; Eigen's
// is not one: ProductKernel::eigen runs the best the CPU has). One thread.
std::size_t softmax_rows_by(ProductKernel kernel, const double* in, double* out, std::size_t rows, std::size_t T);
// y[j] = exp(x[j] - shift), 0 where x[j] - shift < -708: the softmax's exp.
void exp_shifted_by(ProductKernel kernel, const double* x, double shift, double* y, std::size_t n);
void relu_by(ProductKernel kernel, double* h, std::size_t n);

}  // namespace attn

#endif  // ATTN_KERNELS_ROWS_H_
