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

// The same with b a weight left where a checkpoint stores it (attn/tensor.h's
// StoredMatrix), each number widened as it is read: the same sums in the same order, so the
// bits of matmul on the widened matrix. The products from kExactMaxElements multiply-adds
// go to kernels/matmul.h, which widens b as it packs it.
void matmul(const double* a, const StoredMatrix& b, double* out, std::size_t M, std::size_t K, std::size_t P);

// Which operand of a product is read transposed, where it is stored.
enum class Transposed { A, B };

// The backward pass's products, out (M,P):
//   Transposed::A: a is stored (K,M), b is (K,P) -> out = aᵀ @ b   (dW = xᵀ · dy)
//   Transposed::B: a is (M,K), b is stored (P,K) -> out = a @ bᵀ   (dx = dy · Wᵀ)
// out[i,j] summed in order of k, one rounding per multiply and per add, as matmul; the
// products above kExactMaxElements multiply-adds go to kernels/matmul.h.
void matmul_transposed(const double* a, const double* b, Transposed which, double* out, std::size_t M, std::size_t K,
                       std::size_t P);

// x is (B,S,N), W is (N,M) (in `data`, or stored), b is (M,) or empty -> x @ W + b is (B,S,M).
// The new last axis is called out_axis ("H*d" for projections into heads, "N" for W_o).
Tensor linear_projection(const Tensor& x, const Tensor& W, const Tensor& b, const std::string& out_axis);

// The gradients of y = x @ W + b, given dy = dL/dy.
struct ProjectionGradients {
  Tensor dx;  // (B,S,N) = dy @ Wᵀ
  Tensor dW;  // (N,M)   = Σ over positions of xᵀ dy: (B*S,N)ᵀ @ (B*S,M)
  Tensor db;  // (M,)    = Σ over positions of dy; empty when the projection has no bias
};
// x is (B,S,N), W is (N,M), dy is (B,S,M) -> dx (B,S,N), dW (N,M), db (M,) when has_bias.
ProjectionGradients linear_projection_backward(const Tensor& x, const Tensor& W, bool has_bias, const Tensor& dy);

// The bias of a projection as a step of its own (the queries', keys' and values' biases:
// b_q, b_k, b_v): x is (B,S,M), the product x · W, b is (M,) -> x + b is (B,S,M), the same
// row b added at every position, one rounding per element (so x · W then + b gives the bits
// linear_projection(x, W, b) gives).
Tensor add_bias(const Tensor& x, const Tensor& b);
// dy is (B,S,M) -> db (M,) = Σ over positions of dy, in order of position; axis names the
// result's one axis ("H*d"). dL/dx is dy itself: adding a constant passes the gradient on.
Tensor add_bias_backward(const Tensor& dy, const std::string& axis);
// The bias step's backward, of b (M,) and dy (B,S,M): dL/dx = dy (B,S,M), dL/db (M,) =
// add_bias_backward(dy), its axis named as b's.
struct BiasGradients {
  Tensor dx;
  Tensor db;
};
BiasGradients add_bias_step_backward(const Tensor& b, const Tensor& dy);

}  // namespace attn

#endif  // ATTN_STEPS_PROJECTION_H_
