#include "attn/tensor.h"

#include <catch2/catch.hpp>

using attn::Tensor;

TEST_CASE("transposed matches NumPy's transpose(0, 2, 1, 3)", "[tensor]") {
  // a = np.arange(24).reshape(2,3,2,2); a.transpose(0,2,1,3)[1,0,2,1] == a[1,2,0,1] == 21
  Tensor a({2, 3, 2, 2}, {"B", "S", "H", "d"});
  for (std::size_t i = 0; i < a.size(); ++i) a.data[i] = static_cast<double>(i);
  const Tensor t = attn::transposed(a, {0, 2, 1, 3});
  REQUIRE(t.shape == attn::Shape{2, 2, 3, 2});
  REQUIRE(t.axes == attn::AxisNames{"B", "H", "S", "d"});
  CHECK(t.at({1, 0, 2, 1}) == 21.0);
  CHECK(t.at({0, 1, 0, 0}) == 2.0);
  // np.arange(24).reshape(2,3,2,2).transpose(0,2,1,3).ravel()[:6] == [0, 1, 4, 5, 8, 9]
  CHECK(std::vector<double>(t.data.begin(), t.data.begin() + 6) == std::vector<double>{0, 1, 4, 5, 8, 9});
}

TEST_CASE("reshaped keeps the data and checks the element count", "[tensor]") {
  Tensor a({2, 6}, {"S", "N"});
  a.data[7] = 3.5;
  const Tensor r = attn::reshaped(a, {2, 3, 2}, {"S", "H", "d"});
  CHECK(r.at({1, 0, 1}) == 3.5);
  CHECK_THROWS(attn::reshaped(a, {5, 2}, {}));
}

TEST_CASE("shapes print with their axis names", "[tensor]") {
  CHECK(attn::shape_with_axes({2, 2, 6, 2}, {"B", "H", "S", "d"}) == "(B=2,H=2,S=6,d=2)");
  CHECK(attn::shape_with_axes({2, 6, 4}, {}) == "(2, 6, 4)");
  CHECK(attn::shape_string({4, 3}) == "[4, 3]");
}

TEST_CASE("slice_first takes one block along the first axis", "[tensor]") {
  Tensor a({3, 2}, {"S", "N"});
  a.data = {1, 2, 3, 4, 5, 6};
  const Tensor row = attn::slice_first(a, 2);
  CHECK(row.shape == attn::Shape{2});
  CHECK(row.data == std::vector<double>{5, 6});
}

TEST_CASE("take_index removes one axis like NumPy's take", "[tensor]") {
  // a = np.arange(24).reshape(2,3,4); a.take(1, axis=1) == [[4,5,6,7],[16,17,18,19]]
  Tensor a({2, 3, 4}, {"B", "H", "S"});
  for (std::size_t i = 0; i < a.size(); ++i) a.data[i] = static_cast<double>(i);
  const Tensor t = attn::take_index(a, 1, 1);
  CHECK(t.shape == attn::Shape{2, 4});
  CHECK(t.axes == attn::AxisNames{"B", "S"});
  CHECK(t.data == std::vector<double>{4, 5, 6, 7, 16, 17, 18, 19});
  CHECK(attn::take_index(a, 0, 1).data[0] == 12.0);
  CHECK_THROWS(attn::take_index(a, 2, 4));
}
