#include "steps/loss.h"

#include <cmath>

#include <catch2/catch.hpp>

#include "gradient_check.h"
#include "steps/attention.h"

using Catch::Matchers::WithinAbs;

TEST_CASE("cross_entropy: the mean of -log p(label) over the positions not ignored", "[loss]") {
  // logits [0, 0] and [ln 3, 0]: p(label 0) = 1/2 and 3/4; the third position is ignored
  attn::Tensor logits({1, 3, 2}, {"B", "T", "V"}), labels({1, 3}, {"B", "T"});
  logits.data = {0, 0, std::log(3.0), 0, 5, -5};
  labels.data = {0, 0, 1};
  CHECK(attn::counted_labels(labels, 1) == 2);
  CHECK_THAT(attn::cross_entropy(logits, labels, 1), WithinAbs((std::log(2.0) + std::log(4.0 / 3.0)) / 2, 1e-15));
  // nothing ignored: the third position's -log p(1) joins the mean
  const double third = std::log(1 + std::exp(10.0));
  CHECK_THAT(attn::cross_entropy(logits, labels, std::nullopt),
             WithinAbs((std::log(2.0) + std::log(4.0 / 3.0) + third) / 3, 1e-14));
  // logits far apart: -log p from the logits, never log(0)
  logits.data = {0, 800, 0, 0, 0, 0};
  CHECK_THAT(attn::cross_entropy(logits, labels, 1), WithinAbs((800 + std::log(2.0)) / 2, 1e-12));
}

TEST_CASE("cross-entropy's gradients: (p - onehot) / n for the logits, -1 / (n p) for the probabilities",
          "[loss][backward]") {
  const attn::Tensor logits = attn_test::wave_tensor({2, 2, 4}, {"B", "T", "V"}, 0.6);
  attn::Tensor labels({2, 2}, {"B", "T"});
  labels.data = {3, 0, 0, 1};  // id 0 is ignored: two positions count
  const attn::Tensor p = attn::softmax_rows(logits);
  const attn::Tensor dlogits = attn::cross_entropy_backward(p, labels, 0);
  attn::Tensor one({1}, {""});
  one.data = {1};
  const attn::Tensor numeric = attn_test::numeric_gradient(
      [&](const attn::Tensor& v) {
        attn::Tensor l({1}, {""});
        l.data = {attn::cross_entropy(v, labels, 0)};
        return l;
      },
      logits, one);
  CHECK(attn_test::relative_error(dlogits, numeric) < 1e-9);
  for (std::size_t v = 0; v < 4; ++v) CHECK(dlogits.data[4 + v] == 0.0);  // an ignored position
  const attn::Tensor dp = attn::cross_entropy_probabilities_gradient(p, labels, 0);
  CHECK_THAT(dp.data[3], WithinAbs(-1.0 / (2 * p.data[3]), 1e-15));
  CHECK(dp.data[0] == 0.0);
  CHECK(dp.data[4] == 0.0);
  // the softmax's backward takes dp to the same dlogits
  CHECK(attn_test::relative_error(attn::softmax_rows_backward(p, dp), dlogits) < 1e-14);
}

TEST_CASE("output_grad's loss: Σ output ⊙ output_grad", "[loss]") {
  attn::Tensor y({1, 1, 3}, {"B", "S", "N"}), g({1, 1, 3}, {"B", "S", "N"});
  y.data = {1, 2, 3};
  g.data = {0.5, -1, 2};
  CHECK(attn::output_grad_loss(y, g) == 4.5);
}
