// The projection x @ W + b: one learned matrix applied to every position. It makes the
// queries, keys and values and the output of attention (W_q, W_k, W_v, W_o), both layers of
// the feed-forward network and the logits. And the matrix product it is made of, which
// attention's scores and context use too.
//
// Shapes: B batch, S positions, N the input width, M the output width.
#ifndef ATTN_STEPS_PROJECTION_H_
#define ATTN_STEPS_PROJECTION_H_

#include <cstddef>
#include <string>

#include "attn/tensor.h"

namespace attn {

// a is (M,K), b is (K,P), out is (M,P), all row-major -> out = a @ b:
// out[i,j] = a[i,0] * b[0,j] + a[i,1] * b[1,j] + ... summed in order of k, one rounding
// per multiply and per add, as a hand calculation and NumPy's reference BLAS do. The
// reference for the products below kExactMaxElements multiply-adds; larger ones go to
// kernels/matmul.h.
void matmul(const double* a, const double* b, double* out, std::size_t M, std::size_t K, std::size_t P);

// x is (B,S,N), W is (N,M), b is (M,) or empty -> x @ W + b is (B,S,M).
// The new last axis is called out_axis ("H*d" for projections into heads, "N" for W_o).
Tensor linear_projection(const Tensor& x, const Tensor& W, const Tensor& b, const std::string& out_axis);

}  // namespace attn

#endif  // ATTN_STEPS_PROJECTION_H_
