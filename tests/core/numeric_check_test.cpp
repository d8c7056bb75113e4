#include "core/numeric_check.h"

#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/trace.h"
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
  CHECK(attn::allows_masked_infinity("encoder.mask"));
  CHECK(attn::allows_masked_infinity("encoder.0.attention.masked_scores"));
  CHECK_FALSE(attn::allows_masked_infinity("encoder.0.attention.scores"));
  CHECK_FALSE(attn::allows_masked_infinity("mask.0.attention.weights"));  // only the last part counts

  Tensor masked({1, 2}, {"S", "S"});
  masked.data = {0.5, -kInf};
  CHECK(numeric_error_of([&] { attn::check_finite("encoder.0.attention.masked_scores", masked); }).empty());
  CHECK(numeric_error_of([&] { attn::check_finite("encoder.0.attention.scaled_scores", masked); }) ==
        "encoder.0.attention.scaled_scores[0, 1] is -inf (overflow)");
  // +inf and NaN are never a mask's doing
  masked.data = {kInf, -kInf};
  CHECK(numeric_error_of([&] { attn::check_finite("encoder.0.attention.masked_scores", masked); }) ==
        "encoder.0.attention.masked_scores[0, 0] is inf (overflow)");
}

TEST_CASE("every recorded tensor is checked, at the index it is recorded with", "[numeric][trace]") {
  attn::Trace unbatched(/*drop_batch_axis=*/true);
  Tensor q({1, 2, 2}, {"B", "S", "H*d"});
  q.data = {1.0, 2.0, 3.0, std::nan("")};
  // recorded as (S, H*d): the B axis is not in the index
  CHECK(numeric_error_of([&] { unbatched.record("encoder.0.attention.q", q); }) ==
        "encoder.0.attention.q[1, 1] is nan (0/0 or inf - inf)");
}

TEST_CASE("scores that overflow float64 stop the run with the tensor and position", "[numeric][forward]") {
  // q = k = X @ I = X. scores[i][j] = q_i . k_j:
  //   [0][0] = 1*1 + 1*1 = 2, [0][1] = [1][0] = 1e200 + 1e200 = 2e200,
  //   [1][1] = 1e200*1e200 * 2 = 2e400 > 1.8e308: inf, at (H=0, S=1, T=1).
  const attn::Model model = attn::load_model_text(R"({"model": {"d_model": 2, "num_heads": 1},
      "input": {"X": [[1, 1], [1e200, 1e200]]},
      "encoder": [{"attention": {"W_q": "identity", "W_k": "identity", "W_v": "identity"}}]})",
                                                  "overflow.json");
  attn::Trace trace(!model.batched);
  CHECK(numeric_error_of([&] { attn::run_model(model, trace); }) ==
        "encoder.0.attention.scores[0, 1, 1] is inf (overflow)");
  // everything before the scores was finite and recorded
  REQUIRE(trace.find("encoder.0.attention.k_t") != nullptr);
  CHECK(trace.find("encoder.0.attention.k_t")->tensor.at({0, 1, 1}) == 1e200);
}

TEST_CASE("a fully masked row gets zero weights and a warning, not a numeric error", "[numeric][forward]") {
  const attn::Model model = attn::load_model_text(R"({"model": {"d_model": 2, "num_heads": 1},
      "input": {"X": [[1, 2], [3, 4]]},
      "encoder": [{"attention": {"W_q": "identity", "W_k": "identity", "W_v": "identity"}}]})",
                                                  "masked.json");
  // (S, T): query 0 may see no key at all; query 1 sees both
  Tensor mask({2, 2}, {"S", "S"});
  mask.data = {-kInf, -kInf, 0.0, 0.0};
  attn::Trace trace(true);
  attn::multi_head_attention(model.input, "input", model.input, "input", model.encoder[0].attention, model.config, mask,
                             "encoder.mask", "encoder.0.attention.", trace);
  const Tensor& weights = trace.find("encoder.0.attention.weights")->tensor;
  CHECK(weights.at({0, 0, 0}) == 0.0);
  CHECK(weights.at({0, 0, 1}) == 0.0);
  // row 1: scores [1*3 + 2*4, 3*3 + 4*4] / sqrt(2) = [11, 25] / sqrt(2); weights sum to 1
  CHECK(weights.at({0, 1, 0}) + weights.at({0, 1, 1}) == Approx(1.0).epsilon(1e-15));
  const Tensor& context = trace.find("encoder.0.attention.context")->tensor;
  CHECK(context.at({0, 0, 0}) == 0.0);
  CHECK(context.at({0, 0, 1}) == 0.0);
  REQUIRE(trace.warnings().size() == 1);
  CHECK(trace.warnings()[0].name == "encoder.0.attention.weights");
  CHECK(trace.warnings()[0].message ==
        "1 row had every key masked; softmax is undefined there (0/0), so those rows get zero weights and a zero "
        "context vector");
}
