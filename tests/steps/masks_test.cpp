#include "steps/masks.h"

#include <limits>

#include <catch2/catch.hpp>

TEST_CASE("padding mask marks <PAD> positions", "[masks]") {
  attn::Tensor ids({2, 3}, {"B", "S"});
  ids.data = {2, 3, 4, 4, 0, 0};
  CHECK(attn::padding_mask(ids, 0).data == std::vector<double>{0, 0, 0, 0, 1, 1});
}

TEST_CASE("causal mask: -inf above the diagonal, so query i sees keys 0..i", "[masks]") {
  const double inf = std::numeric_limits<double>::infinity();
  const attn::Tensor mask = attn::causal_mask(3, 3);
  CHECK(mask.shape == attn::Shape{3, 3});
  CHECK(mask.data == std::vector<double>{0, -inf, -inf, 0, 0, -inf, 0, 0, 0});
  // more keys than queries: the extra keys are in the future of every query
  CHECK(attn::causal_mask(2, 3).data == std::vector<double>{0, -inf, -inf, 0, 0, -inf});
}

TEST_CASE("attention_mask combines causal and key padding additively", "[masks]") {
  const double inf = std::numeric_limits<double>::infinity();
  // causal only: (S,S)
  CHECK(attn::attention_mask(2, 2, true, nullptr).data == std::vector<double>{0, -inf, 0, 0});
  // key padding: batch 1's last key is padding -> that column is -inf in every row
  attn::Tensor padding({2, 2}, {"B", "S"});
  padding.data = {0, 0, 0, 1};
  const attn::Tensor m = attn::attention_mask(2, 2, false, &padding);
  CHECK(m.shape == attn::Shape{2, 2, 2});
  CHECK(m.data == std::vector<double>{0, 0, 0, 0, 0, -inf, 0, -inf});
  // both
  const attn::Tensor both = attn::attention_mask(2, 2, true, &padding);
  CHECK(both.data == std::vector<double>{0, -inf, 0, 0, 0, -inf, 0, -inf});
  // cross-attention: 1 query over 2 keys
  CHECK(attn::attention_mask(1, 2, false, &padding).data == std::vector<double>{0, 0, 0, -inf});
}

TEST_CASE("sliding window: query i sees keys i-W+1 .. i, with the causal mask", "[masks][sliding_window]") {
  const double inf = std::numeric_limits<double>::infinity();
  // S = 4, W = 2: row 0 sees 0; row 1 sees 0, 1; row 2 sees 1, 2; row 3 sees 2, 3.
  const attn::Tensor m = attn::sliding_window_mask(4, 4, 2);
  const std::vector<double> expected = {0,    -inf, -inf, -inf,  //
                                        0,    0,    -inf, -inf,  //
                                        -inf, 0,    0,    -inf,  //
                                        -inf, -inf, 0,    0};
  CHECK(m.data == expected);
  // W = 1: each position sees itself only; W >= S: the causal mask.
  const attn::Tensor one = attn::sliding_window_mask(3, 3, 1);
  CHECK(one.data == std::vector<double>{0, -inf, -inf, -inf, 0, -inf, -inf, -inf, 0});
  CHECK(attn::sliding_window_mask(3, 3, 3).data == attn::causal_mask(3, 3).data);
  // With padding: (B,S,T), a padded key hidden as well.
  attn::Tensor padding({1, 4}, {"B", "S"});
  padding.data = {0, 0, 0, 1};
  const attn::Tensor both = attn::attention_mask(4, 4, true, &padding, 2);
  CHECK(both.shape == attn::Shape{1, 4, 4});
  CHECK(both.data[3 * 4 + 3] == -inf);  // row 3: key 3 is <PAD>
  CHECK(both.data[3 * 4 + 2] == 0);
  CHECK(both.data[3 * 4 + 1] == -inf);  // outside the window
  // Without causal the window does not apply (the loader refuses that model).
  CHECK(attn::attention_mask(2, 2, false, nullptr, 1).data == std::vector<double>{0, 0, 0, 0});
}
