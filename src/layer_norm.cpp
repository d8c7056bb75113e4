#include "attn/layer_norm.h"

#include <cmath>
#include <stdexcept>

namespace attn {

Tensor residual_add(const Tensor& x, const Tensor& sublayer) {
  // (B,S,N) + (B,S,N) -> (B,S,N)
  if (x.shape != sublayer.shape) throw std::logic_error("residual_add: shapes differ");
  Tensor out = x;
  for (std::size_t i = 0; i < out.size(); ++i) out.data[i] += sublayer.data[i];
  return out;
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  // (B,S,N) -> (B,S,N), normalized over N
  const std::size_t N = x.shape.back();
  if (gamma.size() != N || beta.size() != N) throw std::logic_error("layer_norm: gamma and beta must be (N,)");
  Tensor out = x;
  const std::size_t rows = x.size() / N;
  for (std::size_t r = 0; r < rows; ++r) {
    double* row = out.data.data() + r * N;
    double mean = 0;
    for (std::size_t j = 0; j < N; ++j) mean += row[j];
    mean /= static_cast<double>(N);
    double var = 0;
    for (std::size_t j = 0; j < N; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<double>(N);
    const double inv_std = 1.0 / std::sqrt(var + eps);
    for (std::size_t j = 0; j < N; ++j) row[j] = (row[j] - mean) * inv_std * gamma.data[j] + beta.data[j];
  }
  return out;
}

}  // namespace attn
