#include "steps/residual.h"

#include <catch2/catch.hpp>

#include "attn/error.h"

TEST_CASE("residual_add adds element by element", "[residual]") {
  attn::Tensor a({1, 1, 2}, {"B", "S", "N"}), b({1, 1, 2}, {"B", "S", "N"});
  a.data = {1, 2};
  b.data = {0.5, -3};
  const attn::Tensor sum = attn::residual_add(a, b);
  CHECK(sum.data == std::vector<double>{1.5, -1});
  CHECK(sum.axes == attn::AxisNames{"B", "S", "N"});
  // a sub-layer of another shape is a bug in the caller
  attn::Tensor c({1, 2, 1}, {"B", "S", "N"});
  CHECK_THROWS_AS(attn::residual_add(a, c), attn::InternalError);
}

TEST_CASE("a residual passes its gradient to both terms, and two gradients of one tensor add", "[residual][backward]") {
  attn::Tensor dy({1, 1, 2}, {"B", "S", "N"});
  dy.data = {0.5, -3};
  CHECK(attn::residual_add_backward(dy).data == dy.data);
  CHECK(attn::gradient_sum(dy, dy).data == std::vector<double>{1, -6});
}
