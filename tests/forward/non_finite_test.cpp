// Non-finite values met by the forward pass: -inf is a mask's doing, anything else stops
// the run naming the tensor and the position, as recorded.
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/trace.h"
#include "error_message.h"
#include "forward/layers.h"
#include "trace_lookup.h"

using attn::Tensor;
using attn_test::numeric_error_of;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("the trace lets -inf through only in masks and masked scores", "[numeric][trace]") {
  Tensor mask({1, 2}, {"S", "S"});
  mask.data = {0.0, -kInf};
  for (attn::StepKind kind : {attn::StepKind::Mask, attn::StepKind::MaskedScores}) {
    attn::Trace trace;
    CHECK_NOTHROW(trace.record(attn::StepId{kind, attn::Sequence::Source, attn::Stack::Encoder}, mask));
  }
  attn::Trace trace;
  const attn::StepId weights{attn::StepKind::AttentionWeights, attn::Sequence::Source, attn::Stack::Encoder, 0,
                             attn::Block::SelfAttention};
  CHECK(numeric_error_of([&] { trace.record(weights, mask); }) ==
        "encoder.0.attention.weights[0, 1] is -inf (overflow)");
}

TEST_CASE("every recorded tensor is checked, at the index it is recorded with", "[numeric][trace]") {
  attn::Trace unbatched(/*drop_batch_axis=*/true);
  Tensor q({1, 2, 2}, {"B", "S", "H*d"});
  q.data = {1.0, 2.0, 3.0, std::nan("")};
  const attn::StepId q_id{attn::StepKind::Query, attn::Sequence::Source, attn::Stack::Encoder, 0,
                          attn::Block::SelfAttention};
  // recorded as (S, H*d): the B axis is not in the index
  CHECK(numeric_error_of([&] { unbatched.record(q_id, q); }) ==
        "encoder.0.attention.q[1, 1] is nan (0/0 or inf - inf)");
}

TEST_CASE("scores that overflow float64 stop the run with the tensor and position", "[numeric][forward]") {
  // q = k = X @ I = X. scores[i][j] = q_i . k_j:
  //   [0][0] = 1*1 + 1*1 = 2, [0][1] = [1][0] = 1e200 + 1e200 = 2e200,
  //   [1][1] = 1e200*1e200 * 2 = 2e400 > 1.8e308: inf, at (H=0, S=1, T=1).
  const attn::LoadedModel model = attn::load_model_text(R"({"model": {"d_model": 2, "num_heads": 1},
      "input": {"X": [[1, 1], [1e200, 1e200]]},
      "encoder": [{"attention": {"W_q": "identity", "W_k": "identity", "W_v": "identity"}}]})",
                                                        "overflow.json");
  attn::Trace trace(!model.input.batched);
  CHECK(numeric_error_of([&] { attn::run_model(model.model, model.input, trace); }) ==
        "encoder.0.attention.scores[0, 1, 1] is inf (overflow)");
  // everything before the scores was finite and recorded
  REQUIRE(find_entry(trace, "encoder.0.attention.k_t") != nullptr);
  CHECK(find_entry(trace, "encoder.0.attention.k_t")->tensor.at({0, 1, 1}) == 1e200);
}

TEST_CASE("a fully masked row gets zero weights and a warning, not a numeric error", "[numeric][forward]") {
  const attn::LoadedModel model = attn::load_model_text(R"({"model": {"d_model": 2, "num_heads": 1},
      "input": {"X": [[1, 2], [3, 4]]},
      "encoder": [{"attention": {"W_q": "identity", "W_k": "identity", "W_v": "identity"}}]})",
                                                        "masked.json");
  // (S, T): query 0 may see no key at all; query 1 sees both
  Tensor mask({2, 2}, {"S", "S"});
  mask.data = {-kInf, -kInf, 0.0, 0.0};
  attn::Trace trace(true);
  const attn::TraceScope at(trace, attn::Sequence::Source);
  const attn::Traced x = at.record(attn::StepKind::Input, model.input.X);
  const attn::Traced m =
      at.layer(attn::Stack::Encoder).block(attn::Block::SelfAttention).record(attn::StepKind::Mask, mask);
  attn::multi_head_attention(x, x, model.model.encoder[0].attention, &m, model.model.config,
                             at.layer(attn::Stack::Encoder, 0).block(attn::Block::SelfAttention));
  const Tensor& weights = find_entry(trace, "encoder.0.attention.weights")->tensor;
  CHECK(weights.at({0, 0, 0}) == 0.0);
  CHECK(weights.at({0, 0, 1}) == 0.0);
  // row 1: scores [1*3 + 2*4, 3*3 + 4*4] / sqrt(2) = [11, 25] / sqrt(2); weights sum to 1
  CHECK(weights.at({0, 1, 0}) + weights.at({0, 1, 1}) == Approx(1.0).epsilon(1e-15));
  const Tensor& context = find_entry(trace, "encoder.0.attention.context")->tensor;
  CHECK(context.at({0, 0, 0}) == 0.0);
  CHECK(context.at({0, 0, 1}) == 0.0);
  REQUIRE(trace.warnings().size() == 1);
  CHECK(trace.warnings()[0].name == "encoder.0.attention.weights");
  CHECK(trace.warnings()[0].message ==
        "1 row had every key masked; softmax is undefined there (0/0), so those rows get zero weights and a zero "
        "context vector");
}
