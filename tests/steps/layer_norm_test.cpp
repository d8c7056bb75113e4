#include "steps/layer_norm.h"

#include <catch2/catch.hpp>

#include "core/numeric_check.h"
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

TEST_CASE("qk_norm: each head's row over its RMS, times one gamma (d,) shared by the heads", "[layer_norm][qk_norm]") {
  // Two heads of d = 2, one position. Head 0 is (3, 4): mean(x²) = 12.5, so with eps = 0
  // each number is divided by √12.5 = 3.5355339059327378: (0.8485281374238571,
  // 1.1313708498984762), times gamma (1, 0.5): (0.8485281374238571, 0.5656854249492381).
  // Head 1 is (0, -2): mean(x²) = 2, divided by √2: (0, -1.4142135623730951), times gamma.
  attn::Tensor x({1, 2, 1, 2}, {"B", "H", "S", "d"});
  x.data = {3, 4, 0, -2};
  attn::Tensor gamma({2}, {"d"});
  gamma.data = {1, 0.5};
  const attn::Tensor y = attn::qk_norm(x, gamma, 0.0);
  REQUIRE(y.shape == x.shape);
  const double expected[] = {0.8485281374238571, 0.5656854249492381, 0.0, -0.7071067811865476};
  for (std::size_t i = 0; i < 4; ++i) CHECK_THAT(y.data[i], WithinAbs(expected[i], 1e-15));
}

TEST_CASE("qk_norm_backward agrees with central differences for x and gamma", "[layer_norm][qk_norm][backward]") {
  using attn_test::numeric_gradient;
  using attn_test::relative_error;
  const attn::Tensor x = attn_test::wave_tensor({2, 3, 4, 6}, {"B", "H", "S", "d"}, 0.3);
  const attn::Tensor gamma = attn_test::wave_tensor({6}, {"d"}, 1.0);
  const attn::Tensor dy = attn_test::wave_tensor({2, 3, 4, 6}, {"B", "H", "S", "d"}, 3.0);
  const attn::RmsNormGradients g = attn::qk_norm_backward(x, gamma, 1e-6, dy);
  CHECK(g.dgamma.axes == attn::AxisNames{"d"});
  const auto f_x = [&](const attn::Tensor& v) { return attn::qk_norm(v, gamma, 1e-6); };
  const auto f_g = [&](const attn::Tensor& v) { return attn::qk_norm(x, v, 1e-6); };
  CHECK(relative_error(g.dx, numeric_gradient(f_x, x, dy)) < 1e-8);
  CHECK(relative_error(g.dgamma, numeric_gradient(f_g, gamma, dy)) < 1e-9);
}

TEST_CASE("rms_norm_plus_one: Gemma's x / sqrt(mean(x²) + eps) · (1 + gamma)", "[layer_norm][rms_norm]") {
  // Row [3, 4]: mean(x²) = 12.5; with eps = 0.5, √13 = 3.605551275463989. Gamma [0, -0.5]
  // gives the gains [1, 0.5]: [3/√13, 0.5 · 4/√13].
  attn::Tensor x({1, 2}, {"S", "N"});
  x.data = {3, 4};
  attn::Tensor gamma({2}, {"N"});
  gamma.data = {0, -0.5};
  const attn::Tensor y = attn::rms_norm_plus_one(x, gamma, 0.5);
  CHECK_THAT(y.data[0], WithinAbs(3 / 3.605551275463989, 1e-15));
  CHECK_THAT(y.data[1], WithinAbs(0.5 * 4 / 3.605551275463989, 1e-15));
  // a gamma of zeros leaves the normalized row as it is: RMSNorm with a gain of ones
  attn::Tensor ones({2}, {"N"});
  ones.data = {1, 1};
  CHECK(attn::rms_norm_plus_one(x, attn::Tensor({2}, {"N"}), 0.5).data == attn::rms_norm(x, ones, 0.5).data);
}

TEST_CASE("rms_norm_plus_one_backward agrees with central differences for x and gamma",
          "[layer_norm][rms_norm][backward]") {
  using attn_test::numeric_gradient;
  using attn_test::relative_error;
  const attn::Tensor x = attn_test::wave_tensor({2, 3, 5}, {"B", "S", "N"}, 0.3);
  const attn::Tensor gamma = attn_test::wave_tensor({5}, {"N"}, 1.0);
  const attn::Tensor dy = attn_test::wave_tensor({2, 3, 5}, {"B", "S", "N"}, 3.0);
  const attn::RmsNormGradients g = attn::rms_norm_plus_one_backward(x, gamma, 1e-6, dy);
  const auto f_x = [&](const attn::Tensor& v) { return attn::rms_norm_plus_one(v, gamma, 1e-6); };
  const auto f_g = [&](const attn::Tensor& v) { return attn::rms_norm_plus_one(x, v, 1e-6); };
  CHECK(relative_error(g.dx, numeric_gradient(f_x, x, dy)) < 1e-8);
  CHECK(relative_error(g.dgamma, numeric_gradient(f_g, gamma, dy)) < 1e-9);
}

TEST_CASE("layer_norm and rms_norm refuse a row whose variance or mean square overflows", "[layer_norm][rms_norm]") {
  // Row 1 = [1e160, -1e160]: mean 0, (x - mean)² = 1e320 > 1.8e308, so var = inf and
  // 1/sqrt(var + eps) = 0: the row would be beta (0 here), finite and silently wrong. Row 0
  // is ordinary. The error names the row (1) and what overflowed.
  attn::Tensor x({1, 2, 2}, {"B", "S", "N"});
  x.data = {1, 3, 1e160, -1e160};
  attn::Tensor ones({2}, {"N"}), zeros({2}, {"N"});
  ones.data = {1, 1};
  CHECK_THROWS_WITH(attn::layer_norm(x, ones, zeros, 1e-5),
                    "row 1: the variance of the row is inf (overflow): LayerNorm would divide by it and give beta "
                    "for every value");
  // mean(x²) = 1e320 = inf: 1/rms = 0, the row would be zeros.
  CHECK_THROWS_AS(attn::rms_norm(x, ones, 1e-5), attn::RowValueNotFinite);
  try {
    attn::rms_norm(x, ones, 1e-5);
  } catch (const attn::RowValueNotFinite& e) {
    CHECK(e.where("decoder.0.norm1", {2, 2}) ==
          "decoder.0.norm1[1, :]: the mean of the squares of the row is inf (overflow): RMSNorm would divide by its "
          "root and give 0 for every value");
  }
  // 1e150: (1e150)² = 1e300 is finite, and the output is the ordinary ±1 (ε is lost in 1e300).
  x.data = {1, 3, 1e150, -1e150};
  const attn::Tensor y = attn::layer_norm(x, ones, zeros, 1e-5);
  CHECK(y.data[2] == 1.0);
  CHECK(y.data[3] == -1.0);
}
