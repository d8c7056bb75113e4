#include "steps/projection.h"

#include "core/require.h"
#include "kernels/matmul.h"
#include "kernels/parallel.h"

namespace attn {

void matmul(const double* a, const double* b, double* out, std::size_t M, std::size_t K, std::size_t P) {
  // a is (M,K), b is (K,P) -> out is (M,P)
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < P; ++j) {
      double sum = 0.0;
      for (std::size_t k = 0; k < K; ++k) sum += a[i * K + k] * b[k * P + j];
      out[i * P + j] = sum;
    }
}

Tensor linear_projection(const Tensor& x, const Tensor& W, const Tensor& b, const std::string& out_axis) {
  // x is (B,S,N), W is (N,M), b is (M,) or empty -> out is (B,S,M)
  require(x.rank() == 3 && W.rank() == 2, "linear_projection: x must be (B,S,N) and W (N,M)");
  const std::size_t B = x.shape[0], S = x.shape[1], N = x.shape[2], M = W.shape[1];
  require(W.shape[0] == N, "linear_projection: W rows must equal x's last axis");
  require(b.data.empty() || b.size() == M, "linear_projection: bias length must equal W's columns");
  Tensor out = Tensor::uninitialized({B, S, M}, {x.axes[0], x.axes[1], out_axis});  // every element is written below
  // out = x @ W, all positions in one product: (B*S,N) @ (N,M)
  const std::size_t rows = B * S;
  if (rows * N * M < kExactMaxElements)
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

}  // namespace attn
