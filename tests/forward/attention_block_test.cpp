#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "attn/model.h"
#include "forward/layers.h"
#include "steps/layer_norm.h"

using Catch::Matchers::WithinAbs;

namespace {

const attn::WeightStep& row_of(attn::StepKind kind) {
  for (const attn::WeightStep& s : attn::weight_steps())
    if (s.kind == kind) return s;
  FAIL("no ATTN_WEIGHT_STEP row records this kind");
  return attn::weight_steps().front();
}

}  // namespace

TEST_CASE("step_kinds.def's weight steps: QK-norm's gammas turn the query and the key heads", "[attention_block]") {
  REQUIRE(attn::weight_steps().size() == 5);
  const attn::WeightStep& q = row_of(attn::StepKind::NormedQueries);
  const attn::WeightStep& k = row_of(attn::StepKind::NormedKeys);
  CHECK(q.weight == &attn::AttentionWeights::q_norm);
  CHECK(q.weight_kind == attn::WeightKind::QNorm);
  CHECK(q.on == attn::StepOn::Heads);
  CHECK(q.of == attn::HeadsOf::Queries);
  CHECK(k.weight == &attn::AttentionWeights::k_norm);
  CHECK(k.weight_kind == attn::WeightKind::KNorm);
  CHECK(k.on == attn::StepOn::Heads);
  CHECK(k.of == attn::HeadsOf::Keys);

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

TEST_CASE("step_kinds.def's weight steps: the biases are steps on the projections", "[attention_block]") {
  using attn::StepKind;
  const attn::WeightStep& q = row_of(StepKind::BiasedQuery);
  const attn::WeightStep& k = row_of(StepKind::BiasedKey);
  const attn::WeightStep& v = row_of(StepKind::BiasedValue);
  CHECK(q.weight == &attn::AttentionWeights::b_q);
  CHECK(k.weight == &attn::AttentionWeights::b_k);
  CHECK(v.weight == &attn::AttentionWeights::b_v);
  CHECK(std::string(q.weight_name) == "b_q");
  CHECK(std::string(v.weight_name) == "b_v");
  CHECK(k.weight_kind == attn::WeightKind::b_k);
  for (const attn::WeightStep* s : {&q, &k, &v}) CHECK(s->on == attn::StepOn::Projection);
  CHECK(q.of == attn::HeadsOf::Queries);
  CHECK(k.of == attn::HeadsOf::Keys);
  CHECK(v.of == attn::HeadsOf::Values);

  // x (2 positions) plus the row b = (1, 0.5) at each: (3, 4) -> (4, 4.5), (-1, 2) -> (0, 2.5)
  attn::Tensor x({1, 2, 2}, {"B", "S", "H*d"});
  x.data = {3, 4, -1, 2};
  attn::Tensor b({2}, {"H*d"});
  b.data = {1, 0.5};
  const attn::ModelConfig config;
  CHECK(k.step(x, b, config).data == std::vector<double>{4, 4.5, 0, 2.5});
  // dL/dx is dy itself; dL/db sums dy over the positions: (0.25 + 0.5, -1 + 2)
  attn::Tensor dy = x;
  dy.data = {0.25, -1, 0.5, 2};
  const attn::HeadStepGradients g = v.backward(x, b, config, dy);
  CHECK(g.dx.data == dy.data);
  CHECK(g.dweight.data == std::vector<double>{0.75, 1});
  CHECK(g.dweight.axes == std::vector<std::string>{"H*d"});
}

TEST_CASE("projection_chain: a projection and its bias, as the block's weights say", "[attention_block]") {
  using attn::StepKind;
  attn::AttentionWeights w;
  CHECK(attn::projection_chain(w, attn::HeadsOf::Values) == std::vector<StepKind>{StepKind::Value});
  w.b_k = attn::Tensor({2}, {"H*d"});
  CHECK(attn::projection_chain(w, attn::HeadsOf::Keys) == std::vector<StepKind>{StepKind::Key, StepKind::BiasedKey});
  CHECK(attn::projection_chain(w, attn::HeadsOf::Queries) == std::vector<StepKind>{StepKind::Query});
}
