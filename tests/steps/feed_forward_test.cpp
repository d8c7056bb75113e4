#include "steps/feed_forward.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "gradient_check.h"
#include "kernels/rows.h"
#include "steps/projection.h"

using Catch::Matchers::WithinAbs;

TEST_CASE("activations: ReLU and PyTorch's exact GELU", "[feed_forward]") {
  CHECK(attn::activate(-2.0, attn::Activation::ReLU) == 0.0);
  CHECK(attn::activate(1.5, attn::Activation::ReLU) == 1.5);
  // torch.nn.functional.gelu(torch.tensor([-1.0, 0.5, 2.0], dtype=torch.float64))
  CHECK_THAT(attn::activate(-1.0, attn::Activation::GELU), WithinAbs(-0.15865525393145702, 1e-16));
  CHECK_THAT(attn::activate(0.5, attn::Activation::GELU), WithinAbs(0.34573123063700656, 1e-16));
  CHECK_THAT(attn::activate(2.0, attn::Activation::GELU), WithinAbs(1.9544997361036416, 1e-15));
}

TEST_CASE("feed-forward: relu(x W1 + b1) W2 + b2 by hand", "[feed_forward]") {
  // x = [1, 2]; W1 = [[1, -1, 0], [0, 1, 1]], b1 = [0, 0, -3] -> [1, 1, -1] -> relu [1, 1, 0]
  attn::Tensor x({1, 1, 2}, {"B", "S", "N"});
  x.data = {1, 2};
  attn::Tensor W1({2, 3}, {"N", "F"}), b1({3}, {"F"}), W2({3, 2}, {"F", "N"}), b2({2}, {"N"});
  W1.data = {1, -1, 0, 0, 1, 1};
  b1.data = {0, 0, -3};
  const attn::Tensor h = attn::feed_forward_hidden(x, W1, b1, attn::Activation::ReLU);
  CHECK(h.shape == attn::Shape{1, 1, 3});
  CHECK(h.data == std::vector<double>{1, 1, 0});
  // W2 = [[1, 2], [3, 4], [5, 6]], b2 = [0.5, 0] -> [1+3, 2+4] + b2 = [4.5, 6]
  W2.data = {1, 2, 3, 4, 5, 6};
  b2.data = {0.5, 0};
  CHECK(attn::feed_forward_output(h, W2, b2).data == std::vector<double>{4.5, 6});
}

TEST_CASE("a large GELU layer is the kernel's GELU on every element, on one thread or two", "[feed_forward]") {
  // x (1,1024,8) @ W_1 (8,1024): 1M hidden values, shared between the threads; from
  // kExactMaxElements elements the activation is kernels/rows.h's, each value exactly the
  // kernel's on one thread, whichever thread computed it, and within rows.h's bounds of
  // activate(): its bits on [-1.19, 1.77) (x / sqrt 2 in (-0.84375, 1.25)), an ulp above (5
  // values of these 1M differ), 0.3125 ulp of x below.
  attn::Tensor x({1, 1024, 8}, {"B", "S", "N"}), W1({8, 1024}, {"N", "F"}), b1({1024}, {"F"});
  for (std::size_t i = 0; i < x.size(); ++i) x.data[i] = std::sin(0.3 * static_cast<double>(i));
  for (std::size_t i = 0; i < W1.size(); ++i) W1.data[i] = std::cos(0.7 * static_cast<double>(i));
  for (std::size_t i = 0; i < b1.size(); ++i) b1.data[i] = 0.001 * static_cast<double>(i);
  const attn::Tensor pre = attn::linear_projection(x, W1, b1, "F");
  const attn::Tensor h = attn::feed_forward_hidden(x, W1, b1, attn::Activation::GELU);
  REQUIRE(h.size() == std::size_t{1} << 20);
  std::vector<double> kernel(pre.data.begin(), pre.data.end());
  attn::gelu_erf_by(attn::chosen_product_kernel(), kernel.data(), kernel.size());
  std::size_t wrong = 0, negative = 0, apart = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    wrong += h.data[i] == kernel[i] ? 0 : 1;
    negative += h.data[i] < 0 ? 1 : 0;
    const double a = pre.data[i], reference = attn::activate(a, attn::Activation::GELU);
    const double ulp = std::ldexp(1.0, std::ilogb(a) - 52), z = a / std::sqrt(2.0);
    const bool same = z > -0.84375 && z < 1.25, negative_tail = z <= -0.84375;
    apart += same ? h.data[i] != reference
                  : std::fabs(h.data[i] - reference) > (negative_tail ? 0.3125 * ulp : std::fabs(reference) * 0x1p-52);
  }
  CHECK(wrong == 0);
  CHECK(apart == 0);
  CHECK(negative > 0);  // GELU, not ReLU: negative inputs give small negative outputs
}

TEST_CASE("a small GELU layer is activate() on every element", "[feed_forward]") {
  // Below kExactMaxElements, the plain formula, as every walkthrough prints it
  attn::Tensor x({1, 16, 8}, {"B", "S", "N"}), W1({8, 64}, {"N", "F"}), b1({64}, {"F"});
  for (std::size_t i = 0; i < x.size(); ++i) x.data[i] = 3 * std::sin(0.3 * static_cast<double>(i));
  for (std::size_t i = 0; i < W1.size(); ++i) W1.data[i] = std::cos(0.7 * static_cast<double>(i));
  for (const auto act : {attn::Activation::GELU, attn::Activation::GELUTanh, attn::Activation::SiLU}) {
    const attn::Tensor pre = attn::linear_projection(x, W1, b1, "F");
    const attn::Tensor h = attn::feed_forward_hidden(x, W1, b1, act);
    for (std::size_t i = 0; i < h.size(); ++i) CHECK(h.data[i] == attn::activate(pre.data[i], act));
  }
}

TEST_CASE("activation derivatives: ReLU's is 0 at exactly 0 (as PyTorch), GELU's is Φ(x) + x φ(x)",
          "[feed_forward][backward]") {
  CHECK(attn::activate_derivative(0.0, attn::Activation::ReLU) == 0.0);
  CHECK(attn::activate_derivative(-1e-300, attn::Activation::ReLU) == 0.0);
  CHECK(attn::activate_derivative(1e-300, attn::Activation::ReLU) == 1.0);
  // torch.autograd.grad(F.gelu(x), x) at 0.0 and -1.0 (float64)
  CHECK(attn::activate_derivative(0.0, attn::Activation::GELU) == 0.5);
  CHECK_THAT(attn::activate_derivative(-1.0, attn::Activation::GELU), WithinAbs(-0.08331547058768635, 1e-16));
  for (double x : {-2.5, -0.3, 0.7, 1.9})
    CHECK_THAT(attn::activate_derivative(x, attn::Activation::GELU),
               WithinAbs((attn::activate(x + 1e-6, attn::Activation::GELU) -
                          attn::activate(x - 1e-6, attn::Activation::GELU)) /
                             2e-6,
                         1e-9));
}

TEST_CASE("feed-forward backward agrees with central differences, ReLU and GELU", "[feed_forward][backward]") {
  using attn_test::numeric_gradient;
  using attn_test::relative_error;
  const attn::Tensor x = attn_test::wave_tensor({2, 3, 4}, {"B", "S", "N"}, 0.1);
  const attn::Tensor W1 = attn_test::wave_tensor({4, 6}, {"N", "F"}, 0.5);
  const attn::Tensor b1 = attn_test::wave_tensor({6}, {"F"}, 1.5);
  const attn::Tensor dh = attn_test::wave_tensor({2, 3, 6}, {"B", "S", "F"}, 2.5);
  for (auto act : {attn::Activation::ReLU, attn::Activation::GELU}) {
    const attn::Tensor hidden = attn::feed_forward_hidden(x, W1, b1, act);
    const attn::ProjectionGradients g = attn::feed_forward_hidden_backward(x, W1, b1, act, hidden, dh);
    CHECK(relative_error(
              g.dx, numeric_gradient([&](const attn::Tensor& v) { return attn::feed_forward_hidden(v, W1, b1, act); },
                                     x, dh)) < 1e-8);
    CHECK(relative_error(
              g.dW, numeric_gradient([&](const attn::Tensor& v) { return attn::feed_forward_hidden(x, v, b1, act); },
                                     W1, dh)) < 1e-8);
    CHECK(relative_error(
              g.db, numeric_gradient([&](const attn::Tensor& v) { return attn::feed_forward_hidden(x, W1, v, act); },
                                     b1, dh)) < 1e-8);
  }
}

TEST_CASE("ReLU's backward passes nothing where the pre-activation is exactly 0", "[feed_forward][backward]") {
  // x W_1 + b_1 = [0, 2]: the gradient reaches only the second unit
  attn::Tensor x({1, 1, 1}, {"B", "S", "N"}), W1({1, 2}, {"N", "F"}), b1({2}, {"F"}), dh({1, 1, 2}, {"B", "S", "F"});
  x.data = {1};
  W1.data = {1, 1};
  b1.data = {-1, 1};
  dh.data = {5, 7};
  const attn::Tensor hidden = attn::feed_forward_hidden(x, W1, b1, attn::Activation::ReLU);
  const attn::ProjectionGradients g = attn::feed_forward_hidden_backward(x, W1, b1, attn::Activation::ReLU, hidden, dh);
  CHECK(g.db.data == std::vector<double>{0, 7});
  CHECK(g.dx.data == std::vector<double>{7});
}

TEST_CASE("gelu_tanh and SwiGLU's SiLU, and their derivatives, as PyTorch float64", "[feed_forward]") {
  // F.gelu(x, approximate="tanh") and F.silu in float64 at these points, y and autograd's dy/dx
  // (PyTorch 1.13).
  const double x[] = {-1.0, 0.5, 2.0, -3.0};
  const double gelu_tanh[] = {-0.15880800939172324, 0.34571400982514394, 1.954597694087775, -0.0036373920817729943};
  const double gelu_tanh_grad[] = {-0.08296408384578252, 0.8673699035346424, 1.0860992566236183, -0.011584166630969648};
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK_THAT(attn::activate(x[i], attn::Activation::GELUTanh), WithinAbs(gelu_tanh[i], 1e-15));
    CHECK_THAT(attn::activate_derivative(x[i], attn::Activation::GELUTanh), WithinAbs(gelu_tanh_grad[i], 1e-15));
  }
  const double silu[] = {-0.2689414213699951, 0.3112296656009273, 1.7615941559557646};
  const double silu_grad[] = {0.07232948812851325, 0.7399611873026519, 1.0907842487848955};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK_THAT(attn::activate(x[i], attn::Activation::SwiGLU), WithinAbs(silu[i], 1e-15));
    CHECK_THAT(attn::activate_derivative(x[i], attn::Activation::SwiGLU), WithinAbs(silu_grad[i], 1e-15));
  }
}

TEST_CASE("swiglu_hidden: silu(x W_1) times x W_3, element by element", "[feed_forward]") {
  // x = [1, 2]; W_1 columns give a = [0.5, -1], W_3 columns give u = [2, 3]:
  // hidden = [silu(0.5) · 2, silu(-1) · 3] = [0.6224593312018546, -0.8068242641099853]
  attn::Tensor x({1, 1, 2}, {"B", "S", "N"}), W1({2, 2}, {"N", "F"}), W3({2, 2}, {"N", "F"});
  x.data = {1, 2};
  W1.data = {0.5, 1, 0, -1};
  W3.data = {2, 1, 0, 1};
  const attn::Tensor h = attn::swiglu_hidden(x, W1, W3);
  REQUIRE(h.shape == attn::Shape{1, 1, 2});
  CHECK_THAT(h.data[0], WithinAbs(0.6224593312018546, 1e-15));
  CHECK_THAT(h.data[1], WithinAbs(-0.8068242641099853, 1e-15));
}

TEST_CASE("gelu_tanh and SwiGLU backward agree with central differences", "[feed_forward][backward]") {
  using attn_test::numeric_gradient;
  using attn_test::relative_error;
  const attn::Tensor x = attn_test::wave_tensor({2, 3, 4}, {"B", "S", "N"}, 0.1);
  const attn::Tensor W1 = attn_test::wave_tensor({4, 6}, {"N", "F"}, 0.5);
  const attn::Tensor W3 = attn_test::wave_tensor({4, 6}, {"N", "F"}, 0.9);
  const attn::Tensor b1 = attn_test::wave_tensor({6}, {"F"}, 1.5);
  const attn::Tensor dh = attn_test::wave_tensor({2, 3, 6}, {"B", "S", "F"}, 2.5);
  const auto act = attn::Activation::GELUTanh;
  const attn::Tensor hidden = attn::feed_forward_hidden(x, W1, b1, act);
  const attn::ProjectionGradients g = attn::feed_forward_hidden_backward(x, W1, b1, act, hidden, dh);
  CHECK(relative_error(
            g.dx, numeric_gradient([&](const attn::Tensor& v) { return attn::feed_forward_hidden(v, W1, b1, act); }, x,
                                   dh)) < 1e-8);
  CHECK(relative_error(
            g.dW, numeric_gradient([&](const attn::Tensor& v) { return attn::feed_forward_hidden(x, v, b1, act); }, W1,
                                   dh)) < 1e-8);
  const attn::SwigluGradients s = attn::swiglu_hidden_backward(x, W1, W3, dh);
  CHECK(relative_error(s.dx, numeric_gradient([&](const attn::Tensor& v) { return attn::swiglu_hidden(v, W1, W3); }, x,
                                              dh)) < 1e-8);
  CHECK(relative_error(s.dW_1, numeric_gradient([&](const attn::Tensor& v) { return attn::swiglu_hidden(x, v, W3); },
                                                W1, dh)) < 1e-8);
  CHECK(relative_error(s.dW_3, numeric_gradient([&](const attn::Tensor& v) { return attn::swiglu_hidden(x, W1, v); },
                                                W3, dh)) < 1e-8);
}

TEST_CASE("GeGLU: gelu_tanh(x W_1) times x W_3, and its backward by central differences", "[feed_forward][backward]") {
  using attn_test::numeric_gradient;
  using attn_test::relative_error;
  // One position, N = 1, F = 2: a = [1, -2], u = [3, 0.5]; GELU_tanh(1) = 0.8411919906082768,
  // GELU_tanh(-2) = -0.04540230591222494 (PyTorch float64, approximate="tanh").
  attn::Tensor one({1, 1, 1}, {"B", "S", "N"});
  one.data = {1};
  attn::Tensor gate({1, 2}, {"N", "F"}), up({1, 2}, {"N", "F"});
  gate.data = {1, -2};
  up.data = {3, 0.5};
  const attn::Tensor h = attn::gated_hidden(one, gate, up, attn::Activation::GeGLUTanh);
  CHECK_THAT(h.data[0], WithinAbs(0.8411919906082768 * 3, 1e-14));
  CHECK_THAT(h.data[1], WithinAbs(-0.04540230591222494 * 0.5, 1e-15));
  const attn::Tensor x = attn_test::wave_tensor({2, 3, 4}, {"B", "S", "N"}, 0.1);
  const attn::Tensor W1 = attn_test::wave_tensor({4, 6}, {"N", "F"}, 0.5);
  const attn::Tensor W3 = attn_test::wave_tensor({4, 6}, {"N", "F"}, 0.9);
  const attn::Tensor dh = attn_test::wave_tensor({2, 3, 6}, {"B", "S", "F"}, 2.5);
  const auto act = attn::Activation::GeGLUTanh;
  const attn::SwigluGradients g = attn::gated_hidden_backward(x, W1, W3, act, dh);
  const auto f = [&](const attn::Tensor& a, const attn::Tensor& b, const attn::Tensor& c) {
    return attn::gated_hidden(a, b, c, act);
  };
  CHECK(relative_error(g.dx, numeric_gradient([&](const attn::Tensor& v) { return f(v, W1, W3); }, x, dh)) < 1e-8);
  CHECK(relative_error(g.dW_1, numeric_gradient([&](const attn::Tensor& v) { return f(x, v, W3); }, W1, dh)) < 1e-8);
  CHECK(relative_error(g.dW_3, numeric_gradient([&](const attn::Tensor& v) { return f(x, W1, v); }, W3, dh)) < 1e-8);
}
