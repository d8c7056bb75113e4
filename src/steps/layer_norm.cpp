#include "steps/layer_norm.h"
#include "attn/error.h"

#include <cmath>
#include <stdexcept>

#include <Eigen/Core>

namespace attn {

Tensor residual_add(const Tensor& x, const Tensor& sublayer) {
  // (B,S,N) + (B,S,N) -> (B,S,N)
  if (x.shape != sublayer.shape) throw InternalError("residual_add: shapes differ");
  Tensor out = Tensor::uninitialized(x.shape, x.axes);  // every element is written below
  const double* a = x.data.data();
  const double* b = sublayer.data.data();
  double* o = out.data.data();
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) o[i] = a[i] + b[i];
  return out;
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  // (B,S,N) -> (B,S,N), normalized over N
  const std::size_t N = x.shape.back();
  if (gamma.size() != N || beta.size() != N) throw InternalError("layer_norm: gamma and beta must be (N,)");
  Tensor out = Tensor::uninitialized(x.shape, x.axes);  // every element is written below
  const std::size_t rows = N == 0 ? 0 : x.size() / N;
  const auto n = static_cast<Eigen::Index>(N);
  const Eigen::Map<const Eigen::ArrayXd> g(gamma.data.data(), n), b(beta.data.data(), n);
  // Mean and variance as NumPy's x.mean(-1) and ((x - mean)**2).mean(-1) compute them
  // (pairwise sums), to the last bit; then PyTorch's (x - mean) * rsqrt(var + eps). The
  // output row holds the squares meanwhile, so the loop allocates nothing.
  for (std::size_t r = 0; r < rows; ++r) {
    const Eigen::Map<const Eigen::ArrayXd> row(x.data.data() + r * N, n);
    Eigen::Map<Eigen::ArrayXd> y(out.data.data() + r * N, n);
    const double mean = pairwise_sum(row.data(), N) / static_cast<double>(N);
    y = (row - mean).square();
    const double var = pairwise_sum(y.data(), N) / static_cast<double>(N);
    const double inv_std = 1.0 / std::sqrt(var + eps);
    y = (row - mean) * inv_std * g + b;
  }
  return out;
}

}  // namespace attn
