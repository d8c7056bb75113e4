#include "steps/layer_norm.h"

#include <catch2/catch.hpp>

#include "gradient_check.h"

using Catch::Matchers::WithinAbs;

TEST_CASE("layer_norm: biased variance, eps inside the square root (PyTorch)", "[layer_norm]") {
  // x = [1, 2, 4, -1]: mean 1.5, biased variance 3.25;
  // (x - 1.5) / sqrt(3.25 + 1e-5) as NumPy computes it:
  attn::Tensor x({1, 1, 4}, {"B", "S", "N"});
  x.data = {1, 2, 4, -1};
  attn::Tensor ones({4}, {"N"}), zeros({4}, {"N"});
  ones.data = {1, 1, 1, 1};
  const attn::Tensor y = attn::layer_norm(x, ones, zeros, 1e-5);
  const double expected[] = {-0.2773496714211406, 0.2773496714211406, 1.386748357105703, -1.386748357105703};
  for (std::size_t i = 0; i < 4; ++i) CHECK_THAT(y.data[i], WithinAbs(expected[i], 1e-15));
  // gamma scales and beta shifts each feature
  attn::Tensor gamma({4}, {"N"}), beta({4}, {"N"});
  gamma.data = {2, 2, 2, 2};
  beta.data = {1, 0, 0, 0};
  const attn::Tensor z = attn::layer_norm(x, gamma, beta, 1e-5);
  CHECK_THAT(z.data[0], WithinAbs(2 * expected[0] + 1, 1e-15));
  CHECK_THAT(z.data[3], WithinAbs(2 * expected[3], 1e-15));
}

TEST_CASE("layer_norm_backward agrees with central differences for x, gamma and beta", "[layer_norm][backward]") {
  using attn_test::numeric_gradient;
  using attn_test::relative_error;
  const attn::Tensor x = attn_test::wave_tensor({2, 3, 5}, {"B", "S", "N"}, 0.3);
  const attn::Tensor gamma = attn_test::wave_tensor({5}, {"N"}, 1.0);
  const attn::Tensor beta = attn_test::wave_tensor({5}, {"N"}, 2.0);
  const attn::Tensor dy = attn_test::wave_tensor({2, 3, 5}, {"B", "S", "N"}, 3.0);
  for (double eps : {1e-5, 0.3}) {
    CAPTURE(eps);
    const attn::LayerNormGradients g = attn::layer_norm_backward(x, gamma, eps, dy);
    const auto f_x = [&](const attn::Tensor& v) { return attn::layer_norm(v, gamma, beta, eps); };
    const auto f_g = [&](const attn::Tensor& v) { return attn::layer_norm(x, v, beta, eps); };
    const auto f_b = [&](const attn::Tensor& v) { return attn::layer_norm(x, gamma, v, eps); };
    CHECK(relative_error(g.dx, numeric_gradient(f_x, x, dy)) < 1e-8);
    CHECK(relative_error(g.dgamma, numeric_gradient(f_g, gamma, dy)) < 1e-9);
    CHECK(relative_error(g.dbeta, numeric_gradient(f_b, beta, dy)) < 1e-9);
  }
}

TEST_CASE("rms_norm: x / sqrt(mean(x²) + eps) · gamma, no mean subtracted, no beta", "[layer_norm][rms_norm]") {
  // x = [1, 2, 4, -1]: mean(x²) = (1 + 4 + 16 + 1) / 4 = 5.5; with eps = 0.5 the root is
  // sqrt(6) = 2.449489742783178, so y = x / sqrt(6) · gamma.
  attn::Tensor x({1, 1, 4}, {"B", "S", "N"});
  x.data = {1, 2, 4, -1};
  attn::Tensor gamma({4}, {"N"});
  gamma.data = {1, 2, 1, 3};
  const attn::Tensor y = attn::rms_norm(x, gamma, 0.5);
  const double root = 2.449489742783178;
  const double expected[] = {1 / root, 4 / root, 4 / root, -3 / root};
  for (std::size_t i = 0; i < 4; ++i) CHECK_THAT(y.data[i], WithinAbs(expected[i], 1e-15));
}

TEST_CASE("rms_norm_backward agrees with central differences for x and gamma", "[layer_norm][rms_norm][backward]") {
  using attn_test::numeric_gradient;
  using attn_test::relative_error;
  const attn::Tensor x = attn_test::wave_tensor({2, 3, 5}, {"B", "S", "N"}, 0.3);
  const attn::Tensor gamma = attn_test::wave_tensor({5}, {"N"}, 1.0);
  const attn::Tensor dy = attn_test::wave_tensor({2, 3, 5}, {"B", "S", "N"}, 3.0);
  for (double eps : {1e-6, 0.3}) {
    CAPTURE(eps);
    const attn::RmsNormGradients g = attn::rms_norm_backward(x, gamma, eps, dy);
    const auto f_x = [&](const attn::Tensor& v) { return attn::rms_norm(v, gamma, eps); };
    const auto f_g = [&](const attn::Tensor& v) { return attn::rms_norm(x, v, eps); };
    CHECK(relative_error(g.dx, numeric_gradient(f_x, x, dy)) < 1e-8);
    CHECK(relative_error(g.dgamma, numeric_gradient(f_g, gamma, dy)) < 1e-9);
  }
}
