#include <catch2/catch.hpp>
#include <vector>

#include "attn/model.h"
#include "forward/layers.h"
#include "steps/layer_norm.h"

using Catch::Matchers::WithinAbs;

namespace {

const attn::HeadStep& row_of(attn::StepKind kind) {
  for (const attn::HeadStep& s : attn::head_steps())
    if (s.kind == kind) return s;
  FAIL("no ATTN_HEAD_STEP row records this kind");
  return attn::head_steps().front();
}

}  // namespace

TEST_CASE("block_weights.def's head steps: QK-norm's gammas turn the query and the key heads", "[attention_block]") {
  REQUIRE(attn::head_steps().size() == 2);
  const attn::HeadStep& q = row_of(attn::StepKind::NormedQueries);
  const attn::HeadStep& k = row_of(attn::StepKind::NormedKeys);
  CHECK(q.weight == &attn::AttentionWeights::q_norm);
  CHECK(q.weight_kind == attn::WeightKind::QNorm);
  CHECK(q.heads == attn::HeadsOf::Queries);
  CHECK(k.weight == &attn::AttentionWeights::k_norm);
  CHECK(k.weight_kind == attn::WeightKind::KNorm);
  CHECK(k.heads == attn::HeadsOf::Keys);

  // The row's step is QK-norm with the model's eps: head (3, 4) over √12.5 = 3.5355339059327378,
  // times gamma (1, 0.5) -> (0.8485281374238571, 0.5656854249492381) (tests/steps/layer_norm_test.cpp)
  attn::Tensor x({1, 1, 1, 2}, {"B", "H", "S", "d"});
  x.data = {3, 4};
  attn::Tensor gamma({2}, {"d"});
  gamma.data = {1, 0.5};
  attn::ModelConfig config;
  config.layer_norm_eps = 0.0;
  const attn::Tensor y = q.step(x, gamma, config);
  REQUIRE(y.data.size() == 2);
  CHECK_THAT(y.data[0], WithinAbs(0.8485281374238571, 1e-15));
  CHECK_THAT(y.data[1], WithinAbs(0.5656854249492381, 1e-15));
  // and its backward is qk_norm_backward's, bit for bit
  attn::Tensor dy = x;
  dy.data = {0.25, -1};
  const attn::HeadStepGradients g = k.backward(x, gamma, config, dy);
  const attn::RmsNormGradients expected = attn::qk_norm_backward(x, gamma, 0.0, dy);
  CHECK(g.dx.data == expected.dx.data);
  CHECK(g.dweight.data == expected.dgamma.data);
}

TEST_CASE("head_chain: the entries the query and key heads go through, as the block's weights say",
          "[attention_block]") {
  using attn::StepKind;
  attn::AttentionWeights w;
  CHECK(attn::head_chain(w, attn::HeadsOf::Queries, false) == std::vector<StepKind>{StepKind::QueryHeads});
  CHECK(attn::head_chain(w, attn::HeadsOf::Keys, true) ==
        std::vector<StepKind>{StepKind::KeyHeads, StepKind::RotatedKeys});
  w.q_norm = attn::Tensor({2}, {"d"});
  w.k_norm = attn::Tensor({2}, {"d"});
  CHECK(attn::head_chain(w, attn::HeadsOf::Queries, true) ==
        std::vector<StepKind>{StepKind::QueryHeads, StepKind::NormedQueries, StepKind::RotatedQueries});
  CHECK(attn::head_chain(w, attn::HeadsOf::Keys, false) ==
        std::vector<StepKind>{StepKind::KeyHeads, StepKind::NormedKeys});
}
