#include "core/numeric_check.h"

#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "error_message.h"

using attn::Tensor;
using attn_test::numeric_error_of;

namespace {
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST_CASE("the first non-finite value is named with the tensor and its full index", "[numeric]") {
  Tensor scores({2, 2, 3, 4}, {"B", "H", "S", "S"});
  // flat position of [0, 1, 2, 3] in C order: ((0*2 + 1)*3 + 2)*4 + 3 = 23
  scores.data[23] = kInf;
  scores.data[40] = std::nan("");  // later in C order: not the one reported
  CHECK(numeric_error_of([&] { attn::check_finite("encoder.0.attention.scores", scores); }) ==
        "encoder.0.attention.scores[0, 1, 2, 3] is inf (overflow)");
  scores.data[23] = 1.0;
  // 40 = ((1*2 + 1)*3 + 1)*4 + 0 -> [1, 1, 1, 0]
  CHECK(numeric_error_of([&] { attn::check_finite("encoder.0.attention.scores", scores); }) ==
        "encoder.0.attention.scores[1, 1, 1, 0] is nan (0/0 or inf - inf)");
  Tensor q({1, 3}, {"S", "H*d"});
  q.data[2] = -kInf;
  CHECK(numeric_error_of([&] { attn::check_finite("encoder.0.attention.q", q); }) ==
        "encoder.0.attention.q[0, 2] is -inf (overflow)");
}

TEST_CASE("minus infinity is allowed only where a mask puts it", "[numeric]") {
  Tensor masked({1, 2}, {"S", "S"});
  masked.data = {0.5, -kInf};
  CHECK(numeric_error_of([&] { attn::check_finite("encoder.0.attention.masked_scores", masked, true); }).empty());
  CHECK(numeric_error_of([&] { attn::check_finite("encoder.0.attention.scaled_scores", masked); }) ==
        "encoder.0.attention.scaled_scores[0, 1] is -inf (overflow)");
  // +inf and NaN are never a mask's doing
  masked.data = {kInf, -kInf};
  CHECK(numeric_error_of([&] { attn::check_finite("encoder.0.attention.masked_scores", masked, true); }) ==
        "encoder.0.attention.masked_scores[0, 0] is inf (overflow)");
}
