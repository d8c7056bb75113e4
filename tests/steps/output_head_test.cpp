#include "steps/output_head.h"

#include <catch2/catch.hpp>

#include "gradient_check.h"

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

TEST_CASE("the tied head's backward: dx = dlogits E, and its share dlogitsᵀ x added to dE", "[output][backward]") {
  using attn_test::numeric_gradient;
  using attn_test::relative_error;
  const attn::Tensor x = attn_test::wave_tensor({2, 3, 4}, {"B", "T", "N"}, 0.2);
  const attn::Tensor E = attn_test::wave_tensor({5, 4}, {"V", "N"}, 1.2);
  const attn::Tensor dl = attn_test::wave_tensor({2, 3, 5}, {"B", "T", "V"}, 2.2);
  attn::Tensor dE(E.shape, E.axes);
  dE.data[0] = 1.0;  // added to, not overwritten
  const attn::Tensor dx = attn::tied_vocabulary_logits_backward(x, E, dl, dE);
  CHECK(relative_error(dx, numeric_gradient([&](const attn::Tensor& v) { return attn::tied_vocabulary_logits(v, E); },
                                            x, dl)) < 1e-9);
  attn::Tensor share =
      numeric_gradient([&](const attn::Tensor& v) { return attn::tied_vocabulary_logits(x, v); }, E, dl);
  share.data[0] += 1.0;
  CHECK(relative_error(dE, share) < 1e-9);
}
