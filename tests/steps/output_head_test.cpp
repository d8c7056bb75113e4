#include "steps/output_head.h"

#include <catch2/catch.hpp>

TEST_CASE("logits: x @ W + b, and tied to the embedding x @ E^T", "[output]") {
  attn::Tensor x({1, 1, 2}, {"B", "T", "N"});
  x.data = {1, 2};
  attn::Tensor W({2, 3}, {"N", "V"}), b({3}, {"V"});
  W.data = {1, 0, 1, 0, 1, 1};
  b.data = {0, 0, 10};
  CHECK(attn::vocabulary_logits(x, W, b).data == std::vector<double>{1, 2, 13});
  // E rows: [1,0], [0,1], [1,1] -> x . each row = [1, 2, 3]
  attn::Tensor E({3, 2}, {"V", "N"});
  E.data = {1, 0, 0, 1, 1, 1};
  const attn::Tensor tied = attn::tied_vocabulary_logits(x, E);
  CHECK(tied.shape == attn::Shape{1, 1, 3});
  CHECK(tied.data == std::vector<double>{1, 2, 3});
}
