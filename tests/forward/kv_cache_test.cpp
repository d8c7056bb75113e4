// The KV cache is exact: the logits of every step equal those of a full forward pass over
// the whole prefix, to 1e-12; and the multiply-adds it saves, worked by hand.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/generate.h"
#include "attn/model_file.h"
#include "model/default_model.h"
#include "model/examples.h"
#include "model/token_input.h"

namespace {

attn::TokenInput tokens_of(const std::vector<std::string>& tokens) {
  attn::TokenInput input;
  input.tokens = {tokens};
  input.json_path = "test";
  return input;
}

// The last position's logits of a full run of `model`.
std::vector<double> full_run_logits(const attn::Model& model, const attn::RunInput& input) {
  attn::Trace trace(!input.batched);
  attn::run_model(model, input, trace);
  for (const auto& e : trace.entries())
    if (e.id.kind == attn::StepKind::Logits) {
      const std::size_t V = e.tensor.shape.back();
      return std::vector<double>(e.tensor.data.end() - static_cast<std::ptrdiff_t>(V), e.tensor.data.end());
    }
  FAIL("no logits");
  return {};
}

// The cache's run: the prompt through prefill; then each of `fed` one step.
// After each, its logits against a full run over the prefix (set by `prefix`).
template <typename SetPrefix>
double worst_step_error(const attn::LoadedModel& loaded, const std::vector<std::string>& prompt,
                        const std::vector<std::string>& fed, SetPrefix prefix) {
  const attn::Model& model = loaded.model;
  attn::RunInput input = loaded.input;
  prefix(input, prompt);
  attn::KvCacheDecoder decoder(model);
  attn::Trace trace(!input.batched);
  trace.keep_entries(false);
  decoder.prefill(input, trace);
  const std::vector<double> first = full_run_logits(model, input);
  CHECK(decoder.logits() == first);
  double worst = 0;
  std::vector<std::string> tokens = prompt;
  for (const auto& token : fed) {
    attn::Trace step(true);
    const std::vector<double> cached = decoder.step(*model.vocab.find(token), step);
    tokens.push_back(token);
    CHECK(decoder.length() == tokens.size());
    prefix(input, tokens);
    const std::vector<double> full = full_run_logits(model, input);
    REQUIRE(full.size() == cached.size());
    double scale = 0;
    for (double v : full) scale = std::max(scale, std::fabs(v));
    for (std::size_t i = 0; i < full.size(); ++i) worst = std::max(worst, std::fabs(full[i] - cached[i]) / scale);
  }
  return worst;
}

}  // namespace

TEST_CASE("decoder-only: each cached step's logits equal a full pass over the prefix", "[generate][kv_cache]") {
  const attn::LoadedModel model = attn::load_model_text(attn::find_example("gpt_tiny").json, "gpt_tiny");
  const double worst = worst_step_error(
      model, {"<BOS>", "the"}, {"cat", "sat", "on", "a", "mat", ".", "the", "dog"},
      [](attn::RunInput& in, const std::vector<std::string>& tokens) { in.source_tokens = tokens_of(tokens); });
  CHECK(worst <= 1e-12);
  if (std::getenv("ATTN_TEST_REPORT")) WARN("worst relative error of a cached step's logits: " << worst);
}

namespace {

// A decoder-only model file with random weights (seed 15) and the given model fields: gpt_tiny's
// vocabulary, d_model 8, 4 query heads of 2, two layers, pre-norm; a random position table
// when the positions are learned.
std::string decoder_only_json(const std::string& fields) {
  return R"({"model": {"architecture": "decoder-only", "d_model": 8, "num_heads": 4, "d_ff": 12, "num_layers": 2,
             "norm_first": true, "max_len": 32, "seed": 15, )" +
         fields + R"(},
  "vocab": ["<PAD>", "<UNK>", "<BOS>", "<EOS>", "the", "cat", "dog", "sat", "ran", "on", "a", "mat", "."],
  "embedding": "randn", "input": {"text": "<BOS> the"}, "decoder": "randn", "decoder_norm": {}, "output": "tied")" +
         (fields.find("learned") != std::string::npos ? R"(, "positions": "randn"})" : "}");
}

}  // namespace

TEST_CASE("decoder-only variants: each cached step's logits equal a full pass over the prefix",
          "[generate][kv_cache][variants]") {
  // RoPE turns the new key at its absolute position before it joins the cache (d = 2 has one
  // pair, whose angle is the position whatever theta; d = 4 makes theta count); grouped-query
  // attention caches G heads and repeats them on read; a sliding window reads the last W
  // positions; RMSNorm, SwiGLU and gelu_tanh come through the shared step functions. Ten
  // tokens past a two-token prompt reach well beyond every window.
  const auto [name, fields] = GENERATE(table<std::string, std::string>({
      {"rope", R"("positional_encoding": "rope")"},
      {"rope theta 500, d 4", R"("positional_encoding": "rope", "rope_theta": 500, "d_head": 4)"},
      {"gqa G=2", R"("positional_encoding": "learned", "num_kv_heads": 2)"},
      {"mqa G=1", R"("positional_encoding": "sinusoidal", "num_kv_heads": 1)"},
      {"window 3", R"("positional_encoding": "learned", "sliding_window": 3)"},
      {"window 1", R"("positional_encoding": "learned", "sliding_window": 1)"},
      {"rmsnorm swiglu", R"("positional_encoding": "learned", "norm": "rmsnorm", "activation": "swiglu")"},
      {"gelu_tanh", R"("positional_encoding": "learned", "activation": "gelu_tanh")"},
      {"all together", R"("positional_encoding": "rope", "num_kv_heads": 2, "sliding_window": 3, "norm": "rmsnorm",
                          "layer_norm_eps": 1e-6, "activation": "swiglu")"},
      {"all together, mqa", R"("positional_encoding": "rope", "rope_theta": 100, "num_kv_heads": 1,
                               "sliding_window": 4, "norm": "rmsnorm", "activation": "swiglu")"},
  }));
  INFO(name);
  const attn::LoadedModel model = attn::load_model_text(decoder_only_json(fields), name);
  const double worst = worst_step_error(
      model, {"<BOS>", "the"}, {"cat", "sat", "on", "a", "mat", ".", "the", "dog", "ran", "on"},
      [](attn::RunInput& in, const std::vector<std::string>& tokens) { in.source_tokens = tokens_of(tokens); });
  CHECK(worst <= 1e-12);
  if (std::getenv("ATTN_TEST_REPORT")) WARN(name << ": worst relative error of a cached step's logits: " << worst);
}

TEST_CASE("the cache of grouped-query attention holds G heads, RoPE's keys turned", "[generate][kv_cache][variants]") {
  // H = 4 query heads share G = 2 key/value heads: the cache is (G=2, t, d=2), not (4, t, 2).
  // With RoPE the cached keys are the turned ones (k_rope), which the full pass records last.
  attn::LoadedModel model = attn::load_model_text(
      decoder_only_json(R"("positional_encoding": "rope", "num_kv_heads": 2, "sliding_window": 2)"), "gqa");
  attn::KvCacheDecoder decoder(model.model);
  attn::Trace trace(!model.input.batched);
  const attn::Tensor* k_rope = nullptr;
  decoder.prefill(model.input, trace);
  for (const auto& e : trace.entries())
    if (e.id.kind == attn::StepKind::RotatedKeys && e.id.layer == 1) k_rope = &e.tensor;
  REQUIRE(k_rope != nullptr);
  const attn::Tensor k = decoder.caches()[1].k.as_tensor();
  CHECK(k.shape == std::vector<std::size_t>{2, 2, 2});
  CHECK(k.axes[0] == "G");
  CHECK(std::equal(k.data.begin(), k.data.end(), k_rope->data.begin()));
  attn::Trace step(true);
  decoder.step(*model.model.vocab.find("cat"), step);
  CHECK(decoder.caches()[0].v.shape() == std::vector<std::size_t>{2, 3, 2});
  // the window of 2: the new query's scores cover 2 keys of 3 cached, for each of the 4 heads
  std::size_t scores = 0;
  for (const auto& e : step.entries())
    if (e.id.kind == attn::StepKind::Scores) {
      CHECK(e.tensor.shape == std::vector<std::size_t>{4, 1, 2});
      ++scores;
    }
  CHECK(scores == 2);
}

TEST_CASE("encoder-decoder: each cached step's logits equal a full pass over the prefix", "[generate][kv_cache]") {
  attn::LoadedModel model = attn::load_model_text(attn::default_model_json(), attn::kDefaultModelSource);
  attn::replace_source_text(model.model, model.input, "I love AI", "test");
  const double worst = worst_step_error(
      model, {"<BOS>"}, {"J'", "aime", "l'", "IA"},
      [](attn::RunInput& in, const std::vector<std::string>& tokens) { in.target_tokens = tokens_of(tokens); });
  CHECK(worst <= 1e-12);
  if (std::getenv("ATTN_TEST_REPORT")) WARN("worst relative error of a cached step's logits: " << worst);
}

TEST_CASE("the cache's cost and the full pass's, worked by hand", "[generate][kv_cache]") {
  // gpt_tiny: N = 8, H*d = 8, F = 16, V = 13, 2 layers. A row: 4·N·Hd + 2·N·F = 256 + 256 = 512.
  // Position 3 (L = 4): with the cache 2·(512 + 2·8·4) + 8·13 = 1256; without it
  // 2·(4·512 + 2·8·4·4) + 4·8·13 = 5024.
  const attn::LoadedModel model = attn::load_model_text(attn::find_example("gpt_tiny").json, "gpt_tiny");
  const attn::KvCacheDecoder decoder(model.model);
  CHECK(decoder.cost_at(3).with_cache == 1256);
  CHECK(decoder.cost_at(3).without_cache == 5024);
}

TEST_CASE("the cache's cost with grouped-query attention, SwiGLU and a sliding window, by hand",
          "[generate][kv_cache][variants]") {
  // N = 8, H = 4, d = 2 (H*d = 8), G = 2 (G*d = 4), F = 12, V = 13, 2 layers, window 3.
  // A row: Q and W_o 2·8·8 = 128, K and V 2·8·4 = 64, SwiGLU 3·8·12 = 288: 480.
  // Position 5 (L = 6, the query sees min(6, 3) = 3 keys): with the cache
  // 2·(480 + 2·8·3) + 8·13 = 1160; without it every score of the 6 x 6 matrices:
  // 2·(6·480 + 2·8·6·6) + 6·8·13 = 2·(2880 + 576) + 624 = 7536.
  const attn::LoadedModel model =
      attn::load_model_text(decoder_only_json(R"("positional_encoding": "rope", "num_kv_heads": 2, "sliding_window": 3,
                           "norm": "rmsnorm", "activation": "swiglu")"),
                            "llama");
  const attn::KvCacheDecoder decoder(model.model);
  CHECK(decoder.cost_at(5).with_cache == 1160);
  CHECK(decoder.cost_at(5).without_cache == 7536);
  // position 1 (L = 2 < W): 2·(480 + 2·8·2) + 104 = 1128
  CHECK(decoder.cost_at(1).with_cache == 1128);
}

TEST_CASE("a model without a decoder or output head cannot generate", "[generate][errors]") {
  const attn::LoadedModel encoder = attn::load_model_text(attn::find_example("seed000").json, "seed000");
  CHECK_THROWS_AS(attn::KvCacheDecoder(encoder.model), attn::InputError);
}
