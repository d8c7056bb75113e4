// Ablation (--ablate) and the logit lens (--lens): hand-worked values, the lens's last layer
// against the model's own output bit for bit, and everything after an ablated head recomputed.
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

#include "trace_lookup.h"

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "forward/ablation.h"
#include "model/examples.h"
#include "steps/attention.h"

namespace {

attn::LoadedModel example(const char* name) {
  const attn::BundledExample& e = attn::find_example(name);
  return attn::load_model_text(e.json, std::string("example ") + e.name, attn::LoadOptions{});
}

bool same_bits(const attn::Tensor& a, const attn::Tensor& b) {
  return a.shape == b.shape && std::memcmp(a.data.data(), b.data.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("ablate_heads: a head's rows zeroed, or set to their mean over positions", "[steps][ablation]") {
  // (B=1, H=2, S=3, d=2): head 0 rows [1,2] [3,4] [5,6], head 1 rows [10,20] [30,40] [50,60]
  attn::Tensor context({1, 2, 3, 2}, {"B", "H", "S", "d"});
  context.data = {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60};
  const attn::Tensor zeroed = attn::ablate_heads(context, {1}, false);
  CHECK(zeroed.data == std::vector<double>{1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0});
  // head 0's mean: ([1,2] + [3,4] + [5,6]) / 3 = [3, 4] at every position
  const attn::Tensor mean = attn::ablate_heads(context, {0}, true);
  CHECK(mean.data == std::vector<double>{3, 4, 3, 4, 3, 4, 10, 20, 30, 40, 50, 60});
  CHECK(attn::ablate_heads(context, {0, 1}, false).data == std::vector<double>(12, 0.0));
  CHECK(zeroed.shape == context.shape);
}

TEST_CASE("ablation with W_o the identity: the attention output is the concat with the head's columns zero",
          "[forward][ablation]") {
  // seed 000: an attention block alone, N = H*d = 4, two heads of 2. With W_o = I and no
  // bias, output = concat, so ablating head 1 zeroes columns 2 and 3 of every row and leaves
  // columns 0 and 1 (head 0) as the unablated run has them.
  attn::LoadedModel loaded = example("seed000_batched_mha");
  attn::AttentionWeights& w = loaded.model.encoder[0].attention;
  w.W_o = attn::Tensor({4, 4}, {"H*d", "N"});
  for (std::size_t i = 0; i < 4; ++i) w.W_o.data[i * 4 + i] = 1.0;
  w.b_o = attn::Tensor();
  attn::Trace plain_trace;
  const attn::Tensor plain = attn::run_model(loaded.model, loaded.input, plain_trace);
  loaded.input.ablation = attn::parse_ablation("0.1", false, loaded.model);
  attn::Trace trace;
  const attn::Tensor ablated = attn::run_model(loaded.model, loaded.input, trace);
  REQUIRE(ablated.shape == attn::Shape{2, 6, 4});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 6; ++s) {
      CHECK(ablated.at({b, s, 0}) == plain.at({b, s, 0}));
      CHECK(ablated.at({b, s, 1}) == plain.at({b, s, 1}));
      CHECK(ablated.at({b, s, 2}) == 0.0);
      CHECK(ablated.at({b, s, 3}) == 0.0);
    }
  // recorded as the block's context_ablated, which the merge reads
  const attn::TraceEntry* entry = find_entry(trace, "encoder.0.attention.context_ablated");
  REQUIRE(entry);
  CHECK(entry->tensor.at({1, 0, 4, 1}) == find_entry(trace, "encoder.0.attention.context")->tensor.at({1, 0, 4, 1}));
  CHECK(entry->tensor.at({1, 1, 4, 1}) == 0.0);
  CHECK(find_entry(trace, "encoder.0.attention.concat")->operands[0].name == "encoder.0.attention.context_ablated");
  CHECK_FALSE(find_entry(plain_trace, "encoder.0.attention.context_ablated"));

  // --ablate-mean: head 1's columns are its context's mean over the 6 positions, per item
  loaded.input.ablation.mean = true;
  attn::Trace mean_trace;
  const attn::Tensor by_mean = attn::run_model(loaded.model, loaded.input, mean_trace);
  const attn::Tensor& context = find_entry(mean_trace, "encoder.0.attention.context")->tensor;
  for (std::size_t b = 0; b < 2; ++b) {
    double sum = 0;
    for (std::size_t s = 0; s < 6; ++s) sum += context.at({b, 1, s, 0});
    for (std::size_t s = 0; s < 6; ++s) CHECK(by_mean.at({b, s, 2}) == sum / 6);
  }
}

TEST_CASE("the logit lens: the last layer's is the model's output bit for bit", "[forward][lens]") {
  for (const char* name : {"gpt_tiny", "trained_induction", "trained_translate"}) {
    INFO(name);
    attn::LoadedModel loaded = example(name);
    loaded.input.lens = true;
    attn::Trace trace(!loaded.input.batched);
    attn::run_model(loaded.model, loaded.input, trace);
    const std::size_t layers = loaded.model.decoder.size();
    const std::string last = "lens." + std::to_string(layers - 1);
    REQUIRE(find_entry(trace, last + ".logits"));
    CHECK(same_bits(find_entry(trace, last + ".logits")->tensor, find_entry(trace, "output.logits")->tensor));
    CHECK(same_bits(find_entry(trace, last + ".probabilities")->tensor,
                    find_entry(trace, "output.probabilities")->tensor));
    CHECK_FALSE(find_entry(trace, "lens." + std::to_string(layers) + ".logits"));
    // With a final norm (gpt_tiny, pre-norm), the lens's norm is it; post-norm models have none.
    const attn::TraceEntry* norm = find_entry(trace, "decoder.norm");
    CHECK((norm != nullptr) == (find_entry(trace, last + ".norm") != nullptr));
    if (norm) CHECK(same_bits(norm->tensor, find_entry(trace, last + ".norm")->tensor));
    // An earlier layer's lens differs from the output
    if (layers > 1)
      CHECK_FALSE(same_bits(find_entry(trace, "lens.0.logits")->tensor, find_entry(trace, "output.logits")->tensor));
  }
}

TEST_CASE("ablation specs the model does not have are refused", "[forward][ablation]") {
  const attn::LoadedModel induction = example("trained_induction");
  const attn::LoadedModel translate = example("trained_translate");
  const auto refused = [](const std::string& spec, const attn::Model& model, const std::string& text) {
    INFO(spec);
    CHECK_THROWS_MATCHES(attn::parse_ablation(spec, false, model), attn::InputError,
                         Catch::Matchers::Predicate<attn::InputError>(
                             [&](const attn::InputError& e) { return e.message().find(text) != std::string::npos; }));
  };
  refused("2.0", induction.model, "expected a layer below 2 (the decoder has 2 layers), found \"2.0\"");
  refused("1.2", induction.model, "expected a head below 2 (H=2), found \"1.2\"");
  refused("1", induction.model, "expected heads as L.H");
  refused("1.x", induction.model, "expected heads as L.H");
  refused("01.1", induction.model, "expected heads as L.H");
  refused("", induction.model, "expected at least one head");
  refused("encoder.0.0", induction.model, "this model has no encoder layers");
  refused("0.1", translate.model, "name the stack, encoder.0.1 or decoder.0.1");
  refused("decoder.1.0", translate.model, "expected a layer below 1 (the decoder has 1 layer)");
  const attn::Ablation a = attn::parse_ablation("encoder.0.1, decoder.0.0,encoder.0.1", true, translate.model);
  REQUIRE(a.heads.size() == 2);
  CHECK(a.heads[0].stack == attn::Stack::Encoder);
  CHECK(a.heads[1].stack == attn::Stack::Decoder);
  CHECK(attn::ablation_label(a) == "encoder.0.1, decoder.0.0 set to their means over positions");
}
