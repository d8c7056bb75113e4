// The softmax of many rows, made fast: a vectorized exp and the rows split between
// threads. What it computes is steps/attention.cpp's softmax_rows, whose reference loop
// takes every tensor below kExactMaxElements; this kernel takes the larger ones. Internal
// to src/.
#ifndef ATTN_KERNELS_SOFTMAX_H_
#define ATTN_KERNELS_SOFTMAX_H_

#include <cstddef>

namespace attn {

// in and out are (rows, T), row-major and apart -> out[r] = exp(in[r] - max) / sum, the
// row's maximum subtracted first; a row of -inf only (every key masked) gets zeros.
// Returns the number of such rows.
//
// Differs from the reference loop in two ways, both within the rounding of a float64:
//  - exp is Eigen's vectorized one (within an ulp or two of glibc's), taken by every
//    element: the packets start at the row's first element whatever its address, and the
//    last partial packet goes through a padded copy. So a value never depends on where
//    the row sits in memory (a tail element or an unaligned head computed by a scalar exp
//    made the dumped numbers change with the length of the dump's file name);
//  - exp's argument is kept at or above -708, where exp is still a normal number, and the
//    entries below are set to 0 afterwards: a subnormal result costs the CPU a micro-code
//    assist (four times slower here, where a randn model's huge scores put most of each
//    row below -708), and Eigen's exp would clamp at -709.78 and return 2.2e-308 instead
//    of 0 for masked keys. So weights under exp(-708) = 3.3e-308 of the row's largest come
//    out as 0 rather than as subnormals.
// The row sum is NumPy's pairwise one, as in the reference.
std::size_t softmax_rows_fast(const double* in, double* out, std::size_t rows, std::size_t T);

}  // namespace attn

#endif  // ATTN_KERNELS_SOFTMAX_H_
