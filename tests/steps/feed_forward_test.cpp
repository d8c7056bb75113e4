#include "steps/feed_forward.h"

#include <cmath>

#include <catch2/catch.hpp>

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

TEST_CASE("a large GELU layer is activate() on every element, on one thread or two", "[feed_forward]") {
  // x (1,1024,8) @ W_1 (8,1024): 1M hidden values, shared between the threads for erf;
  // each must be exactly activate(x @ W_1 + b_1), whichever thread computed it.
  attn::Tensor x({1, 1024, 8}, {"B", "S", "N"}), W1({8, 1024}, {"N", "F"}), b1({1024}, {"F"});
  for (std::size_t i = 0; i < x.size(); ++i) x.data[i] = std::sin(0.3 * static_cast<double>(i));
  for (std::size_t i = 0; i < W1.size(); ++i) W1.data[i] = std::cos(0.7 * static_cast<double>(i));
  for (std::size_t i = 0; i < b1.size(); ++i) b1.data[i] = 0.001 * static_cast<double>(i);
  const attn::Tensor pre = attn::linear_projection(x, W1, b1, "F");
  const attn::Tensor h = attn::feed_forward_hidden(x, W1, b1, attn::Activation::GELU);
  REQUIRE(h.size() == std::size_t{1} << 20);
  std::size_t wrong = 0, negative = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    wrong += h.data[i] == attn::activate(pre.data[i], attn::Activation::GELU) ? 0 : 1;
    negative += h.data[i] < 0 ? 1 : 0;
  }
  CHECK(wrong == 0);
  CHECK(negative > 0);  // GELU, not ReLU: negative inputs give small negative outputs
}
