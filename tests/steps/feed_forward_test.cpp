#include "steps/feed_forward.h"

#include <catch2/catch.hpp>

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
