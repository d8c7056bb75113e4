#include "steps/projection.h"

#include "core/require.h"
#include "core/shape_only.h"
#include "kernels/matmul.h"
#include "kernels/parallel.h"

namespace attn {

// The reference products keep a row's P sums in `out` and add one k at a time to all of
// them: each sum is still 0 + a(i,0) b(0,j) + a(i,1) b(1,j) + ..., in k order, rounded
// after each product and each sum (the same bits), but b is read along its rows and the P
// sums run side by side (vectorized) instead of one chain at a time. A generated token's
// attention (q @ k_t and weights @ v per head) was 5% of GPT-2's samples at 400 tokens.
void matmul(const double* a, const double* b, double* out, std::size_t M, std::size_t K, std::size_t P) {
  // a is (M,K), b is (K,P) -> out is (M,P)
  for (std::size_t i = 0; i < M; ++i) {
    double* row = out + i * P;
    for (std::size_t j = 0; j < P; ++j) row[j] = 0.0;
    for (std::size_t k = 0; k < K; ++k) {
      const double x = a[i * K + k];
      const double* b_row = b + k * P;
      for (std::size_t j = 0; j < P; ++j) row[j] += x * b_row[j];
    }
  }
}

void matmul(const double* a, const StoredMatrix& b, double* out, std::size_t M, std::size_t K, std::size_t P) {
  // a is (M,K), b is (K,P) as stored -> out is (M,P)
  if (M * K * P >= kExactMaxElements) {
    matmul_stored_fast(a, b, out, M, K, P);
    return;
  }
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < P; ++j) {
      double sum = 0.0;
      for (std::size_t k = 0; k < K; ++k) sum += a[i * K + k] * b.at(k, j);
      out[i * P + j] = sum;
    }
}

void matmul_transposed(const double* a, const double* b, Transposed which, double* out, std::size_t M, std::size_t K,
                       std::size_t P) {
  // Transposed::A: a is (K,M), b is (K,P); Transposed::B: a is (M,K), b is (P,K) -> out is (M,P)
  if (M * K * P >= kExactMaxElements) {
    matmul_transposed_fast(a, b, Transposes{which == Transposed::A, which == Transposed::B}, out, M, K, P);
    return;
  }
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < P; ++j) {
      double sum = 0.0;
      if (which == Transposed::A)
        for (std::size_t k = 0; k < K; ++k) sum += a[k * M + i] * b[k * P + j];
      else
        for (std::size_t k = 0; k < K; ++k) sum += a[i * K + k] * b[j * K + k];
      out[i * P + j] = sum;
    }
}

Tensor linear_projection(const Tensor& x, const Tensor& W, const Tensor& b, const std::string& out_axis) {
  // x is (B,S,N), W is (N,M), b is (M,) or empty -> out is (B,S,M)
  require(x.rank() == 3 && W.rank() == 2, "linear_projection: x must be (B,S,N) and W (N,M)");
  const std::size_t B = x.shape[0], S = x.shape[1], N = x.shape[2], M = W.shape[1];
  require(W.shape[0] == N, "linear_projection: W rows must equal x's last axis");
  require(b.data.empty() || b.size() == M, "linear_projection: bias length must equal W's columns");
  if (shapes_only()) return shape_only({B, S, M}, {x.axes[0], x.axes[1], out_axis});
  Tensor out = Tensor::uninitialized({B, S, M}, {x.axes[0], x.axes[1], out_axis});  // every element is written below
  // out = x @ W, all positions in one product: (B*S,N) @ (N,M)
  const std::size_t rows = B * S;
  if (W.stored)  // a checkpoint's weight where it lies, widened as read
    matmul(x.data.data(), *W.stored, out.data.data(), rows, N, M);
  else if (rows * N * M < kExactMaxElements)
    matmul(x.data.data(), W.data.data(), out.data.data(), rows, N, M);
  else
    matmul_fast(x.data.data(), W.data.data(), out.data.data(), rows, N, M);
  // out += b, the same bias row added at every position
  if (!b.data.empty()) {
    double* o = out.data.data();
    const double* bias = b.data.data();
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t m = 0; m < M; ++m) o[r * M + m] += bias[m];
  }
  return out;
}

ProjectionGradients linear_projection_backward(const Tensor& x, const Tensor& W, bool has_bias, const Tensor& dy) {
  // x is (B,S,N), W is (N,M), dy is (B,S,M) -> dx (B,S,N), dW (N,M), db (M,)
  require(x.rank() == 3 && W.rank() == 2 && dy.rank() == 3,
          "linear_projection_backward: x (B,S,N), W (N,M), dy (B,S,M)");
  const std::size_t rows = x.shape[0] * x.shape[1], N = x.shape[2], M = W.shape[1];
  require(W.shape[0] == N && dy.shape[0] * dy.shape[1] == rows && dy.shape[2] == M,
          "linear_projection_backward: shapes differ");
  ProjectionGradients g;
  // dx = dy @ Wᵀ: (B*S,M) @ (M,N)
  g.dx = Tensor::uninitialized(x.shape, x.axes);  // every element is written below
  matmul_transposed(dy.data.data(), W.data.data(), Transposed::B, g.dx.data.data(), rows, M, N);
  // dW = xᵀ @ dy: (N,B*S) @ (B*S,M), every position's contribution summed
  g.dW = Tensor::uninitialized(W.shape, W.axes);
  matmul_transposed(x.data.data(), dy.data.data(), Transposed::A, g.dW.data.data(), N, rows, M);
  // db = the sum of dy over every position, in order of position
  if (has_bias) {
    g.db = Tensor({M}, {W.axes.size() == 2 ? W.axes[1] : ""});
    double* db = g.db.data.data();
    const double* d = dy.data.data();
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t m = 0; m < M; ++m) db[m] += d[r * M + m];
  }
  return g;
}

Tensor add_bias(const Tensor& x, const Tensor& b) {
  // x is (B,S,M), b is (M,) -> out is (B,S,M)
  require(x.rank() >= 1 && b.rank() == 1 && b.size() == x.shape.back(), "add_bias: x (B,S,M), b (M,)");
  if (shapes_only()) return shape_only(x.shape, x.axes);
  const std::size_t M = b.size(), rows = x.size() / M;
  Tensor out = x;
  double* o = out.data.data();
  const double* bias = b.data.data();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t m = 0; m < M; ++m) o[r * M + m] += bias[m];
  return out;
}

Tensor add_bias_backward(const Tensor& dy, const std::string& axis) {
  // dy is (B,S,M) -> db is (M,)
  require(dy.rank() >= 1, "add_bias_backward: dy (B,S,M)");
  const std::size_t M = dy.shape.back(), rows = dy.size() / M;
  Tensor db({M}, {axis});
  double* out = db.data.data();
  const double* d = dy.data.data();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t m = 0; m < M; ++m) out[m] += d[r * M + m];
  return db;
}

BiasGradients add_bias_step_backward(const Tensor& b, const Tensor& dy) {
  // b is (M,), dy is (B,S,M) -> dx (B,S,M), db (M,)
  return {dy, add_bias_backward(dy, b.axes.size() == 1 ? b.axes[0] : "")};
}

}  // namespace attn
