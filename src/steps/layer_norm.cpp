#include "steps/layer_norm.h"

#include <cmath>
#include <vector>

#include "core/numeric_check.h"
#include "core/require.h"
#include "core/shape_only.h"

namespace attn {

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  // x is (B,S,N), gamma and beta are (N,) -> (B,S,N), each row normalized over its N values
  const std::size_t N = x.shape.back();
  require(gamma.size() == N && beta.size() == N, "layer_norm: gamma and beta must be (N,)");
  if (shapes_only()) return shape_only(x.shape, x.axes);
  Tensor out = Tensor::uninitialized(x.shape, x.axes);  // every element is written below
  const std::size_t rows = N == 0 ? 0 : x.size() / N;
  const double* g = gamma.data.data();
  const double* b = beta.data.data();
  // Mean and variance as NumPy's x.mean(-1) and ((x - mean)**2).mean(-1) compute them
  // (pairwise sums), to the last bit; then PyTorch's (x - mean) * rsqrt(var + eps). The
  // output row holds the squares meanwhile, so the loop allocates nothing.
  for (std::size_t r = 0; r < rows; ++r) {
    const double* row = x.data.data() + r * N;
    double* y = out.data.data() + r * N;
    const double mean = pairwise_sum(row, N) / static_cast<double>(N);
    for (std::size_t j = 0; j < N; ++j) y[j] = (row[j] - mean) * (row[j] - mean);
    const double var = pairwise_sum(y, N) / static_cast<double>(N);
    // One test a row: an overflowing mean or variance (values near 1e154 and up) makes
    // 1/σ zero or NaN, and the row beta or NaN, which no check of the output would name.
    if (!std::isfinite(var))
      throw RowValueNotFinite("the variance of the row", "LayerNorm would divide by it and give beta for every value",
                              r, var);
    const double inv_std = 1.0 / std::sqrt(var + eps);
    for (std::size_t j = 0; j < N; ++j) y[j] = (row[j] - mean) * inv_std * g[j] + b[j];
  }
  return out;
}

LayerNormGradients layer_norm_backward(const Tensor& x, const Tensor& gamma, double eps, const Tensor& dy) {
  // x is (B,S,N), gamma is (N,), dy is (B,S,N) -> dx (B,S,N), dgamma (N,), dbeta (N,)
  const std::size_t N = x.shape.back();
  require(gamma.size() == N && dy.shape == x.shape, "layer_norm_backward: x and dy (B,S,N), gamma (N,)");
  LayerNormGradients g{Tensor::uninitialized(x.shape, x.axes), Tensor({N}, {"N"}), Tensor({N}, {"N"})};
  const std::size_t rows = N == 0 ? 0 : x.size() / N;
  std::vector<double> x_hat(N), g_dy(N);
  for (std::size_t r = 0; r < rows; ++r) {
    const double* row = x.data.data() + r * N;
    const double* d = dy.data.data() + r * N;
    double* dx = g.dx.data.data() + r * N;
    // The forward's mean and σ, to the last bit (layer_norm above).
    const double mean = pairwise_sum(row, N) / static_cast<double>(N);
    for (std::size_t j = 0; j < N; ++j) x_hat[j] = (row[j] - mean) * (row[j] - mean);
    const double var = pairwise_sum(x_hat.data(), N) / static_cast<double>(N);
    const double inv_std = 1.0 / std::sqrt(var + eps);
    double sum_g = 0.0, sum_g_x_hat = 0.0;
    for (std::size_t j = 0; j < N; ++j) {
      x_hat[j] = (row[j] - mean) * inv_std;
      g_dy[j] = d[j] * gamma.data[j];
      sum_g += g_dy[j];
      sum_g_x_hat += g_dy[j] * x_hat[j];
      g.dgamma.data[j] += d[j] * x_hat[j];
      g.dbeta.data[j] += d[j];
    }
    const double mean_g = sum_g / static_cast<double>(N), mean_g_x_hat = sum_g_x_hat / static_cast<double>(N);
    for (std::size_t j = 0; j < N; ++j) dx[j] = (g_dy[j] - mean_g - x_hat[j] * mean_g_x_hat) * inv_std;
  }
  return g;
}

Tensor rms_norm(const Tensor& x, const Tensor& gamma, double eps) {
  // x is (B,S,N), gamma is (N,) -> (B,S,N), each row divided by its root mean square
  const std::size_t N = x.shape.back();
  require(gamma.size() == N, "rms_norm: gamma must be (N,)");
  if (shapes_only()) return shape_only(x.shape, x.axes);
  Tensor out = Tensor::uninitialized(x.shape, x.axes);  // every element is written below
  const std::size_t rows = N == 0 ? 0 : x.size() / N;
  const double* g = gamma.data.data();
  // mean(x²) as NumPy's (x**2).mean(-1) (pairwise sums; the output row holds the squares
  // meanwhile), then x * rsqrt(ms + eps) * gamma.
  for (std::size_t r = 0; r < rows; ++r) {
    const double* row = x.data.data() + r * N;
    double* y = out.data.data() + r * N;
    for (std::size_t j = 0; j < N; ++j) y[j] = row[j] * row[j];
    const double mean_square = pairwise_sum(y, N) / static_cast<double>(N);
    // One test a row: an overflowing mean square (values near 1e154 and up) makes 1/rms
    // zero, and the row zeros, which no check of the output would name.
    if (!std::isfinite(mean_square))
      throw RowValueNotFinite("the mean of the squares of the row",
                              "RMSNorm would divide by its root and give 0 for every value", r, mean_square);
    const double inv_rms = 1.0 / std::sqrt(mean_square + eps);
    for (std::size_t j = 0; j < N; ++j) y[j] = row[j] * inv_rms * g[j];
  }
  return out;
}

RmsNormGradients rms_norm_backward(const Tensor& x, const Tensor& gamma, double eps, const Tensor& dy) {
  // x is (B,S,N), gamma is (N,), dy is (B,S,N) -> dx (B,S,N), dgamma (N,)
  const std::size_t N = x.shape.back();
  require(gamma.size() == N && dy.shape == x.shape, "rms_norm_backward: x and dy (B,S,N), gamma (N,)");
  RmsNormGradients g{Tensor::uninitialized(x.shape, x.axes), Tensor({N}, {"N"})};
  const std::size_t rows = N == 0 ? 0 : x.size() / N;
  std::vector<double> x_hat(N), g_dy(N);
  for (std::size_t r = 0; r < rows; ++r) {
    const double* row = x.data.data() + r * N;
    const double* d = dy.data.data() + r * N;
    double* dx = g.dx.data.data() + r * N;
    // The forward's r, to the last bit (rms_norm above).
    for (std::size_t j = 0; j < N; ++j) x_hat[j] = row[j] * row[j];
    const double inv_rms = 1.0 / std::sqrt(pairwise_sum(x_hat.data(), N) / static_cast<double>(N) + eps);
    double sum_g_x_hat = 0.0;
    for (std::size_t j = 0; j < N; ++j) {
      x_hat[j] = row[j] * inv_rms;
      g_dy[j] = d[j] * gamma.data[j];
      sum_g_x_hat += g_dy[j] * x_hat[j];
      g.dgamma.data[j] += d[j] * x_hat[j];
    }
    const double mean_g_x_hat = sum_g_x_hat / static_cast<double>(N);
    for (std::size_t j = 0; j < N; ++j) dx[j] = (g_dy[j] - x_hat[j] * mean_g_x_hat) * inv_rms;
  }
  return g;
}

namespace {

// gamma (N,) -> 1 + gamma (N,): Gemma's gain
Tensor one_plus(const Tensor& gamma) {
  Tensor gain = Tensor::uninitialized(gamma.shape, gamma.axes);  // every element is written below
  for (std::size_t j = 0; j < gamma.size(); ++j) gain.data[j] = 1.0 + gamma.data[j];
  return gain;
}

}  // namespace

Tensor rms_norm_plus_one(const Tensor& x, const Tensor& gamma, double eps) {
  // x is (B,S,N), gamma is (N,) -> (B,S,N): (x · rsqrt(mean(x²) + eps)) · (1 + gamma)
  return rms_norm(x, one_plus(gamma), eps);
}

RmsNormGradients rms_norm_plus_one_backward(const Tensor& x, const Tensor& gamma, double eps, const Tensor& dy) {
  // x is (B,S,N), gamma is (N,), dy is (B,S,N) -> dx (B,S,N), dgamma (N,)
  return rms_norm_backward(x, one_plus(gamma), eps, dy);
}

Tensor qk_norm(const Tensor& x, const Tensor& gamma, double eps) {
  // x is (B,H,S,d), gamma is (d,) -> (B,H,S,d): rms_norm over the last axis, a head's row
  require(x.rank() >= 2 && gamma.size() == x.shape.back(), "qk_norm: x (B,H,S,d), gamma (d,)");
  return rms_norm(x, gamma, eps);
}

RmsNormGradients qk_norm_backward(const Tensor& x, const Tensor& gamma, double eps, const Tensor& dy) {
  // x and dy are (B,H,S,d), gamma is (d,) -> dx (B,H,S,d), dgamma (d,)
  RmsNormGradients g = rms_norm_backward(x, gamma, eps, dy);
  g.dgamma.axes = {"d"};
  return g;
}

}  // namespace attn
