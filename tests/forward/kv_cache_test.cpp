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
std::vector<double> full_run_logits(const attn::Model& model) {
  attn::Trace trace(!model.batched);
  attn::run_model(model, trace);
  for (const auto& e : trace.entries())
    if (e.id.kind == attn::StepKind::Logits) {
      const std::size_t V = e.tensor.shape.back();
      return std::vector<double>(e.tensor.data.end() - static_cast<std::ptrdiff_t>(V), e.tensor.data.end());
    }
  FAIL("no logits");
  return {};
}

// The cache's run: the prompt through run_model, observed; then each of `fed` one step.
// After each, its logits against a full run over the prefix (set by `prefix`).
template <typename SetPrefix>
double worst_step_error(attn::Model model, const std::vector<std::string>& prompt, const std::vector<std::string>& fed,
                        SetPrefix prefix) {
  prefix(model, prompt);
  attn::KvCacheDecoder decoder(model);
  attn::Trace trace(!model.batched);
  trace.keep_entries(false);
  trace.set_sink([&](const attn::TraceRecord& r) { decoder.observe(r); });
  attn::run_model(model, trace);
  const std::vector<double> first = full_run_logits(model);
  CHECK(decoder.logits() == first);
  double worst = 0;
  std::vector<std::string> tokens = prompt;
  for (const auto& token : fed) {
    attn::Trace step(true);
    const std::vector<double> cached = decoder.step(*model.vocab.find(token), step);
    tokens.push_back(token);
    CHECK(decoder.length() == tokens.size());
    prefix(model, tokens);
    const std::vector<double> full = full_run_logits(model);
    REQUIRE(full.size() == cached.size());
    double scale = 0;
    for (double v : full) scale = std::max(scale, std::fabs(v));
    for (std::size_t i = 0; i < full.size(); ++i) worst = std::max(worst, std::fabs(full[i] - cached[i]) / scale);
  }
  return worst;
}

}  // namespace

TEST_CASE("decoder-only: each cached step's logits equal a full pass over the prefix", "[generate][kv_cache]") {
  const attn::Model model = attn::load_model_text(attn::find_example("gpt_tiny").json, "gpt_tiny");
  const double worst = worst_step_error(
      model, {"<BOS>", "the"}, {"cat", "sat", "on", "a", "mat", ".", "the", "dog"},
      [](attn::Model& m, const std::vector<std::string>& tokens) { m.source_tokens = tokens_of(tokens); });
  CHECK(worst <= 1e-12);
  if (std::getenv("ATTN_TEST_REPORT")) WARN("worst relative error of a cached step's logits: " << worst);
}

TEST_CASE("encoder-decoder: each cached step's logits equal a full pass over the prefix", "[generate][kv_cache]") {
  attn::Model model = attn::load_model_text(attn::default_model_json(), attn::kDefaultModelSource);
  attn::replace_source_text(model, "I love AI", "test");
  const double worst = worst_step_error(
      model, {"<BOS>"}, {"J'", "aime", "l'", "IA"},
      [](attn::Model& m, const std::vector<std::string>& tokens) { m.target_tokens = tokens_of(tokens); });
  CHECK(worst <= 1e-12);
  if (std::getenv("ATTN_TEST_REPORT")) WARN("worst relative error of a cached step's logits: " << worst);
}

TEST_CASE("the cache's cost and the full pass's, worked by hand", "[generate][kv_cache]") {
  // gpt_tiny: N = 8, H*d = 8, F = 16, V = 13, 2 layers. A row: 4·N·Hd + 2·N·F = 256 + 256 = 512.
  // Position 3 (L = 4): with the cache 2·(512 + 2·8·4) + 8·13 = 1256; without it
  // 2·(4·512 + 2·8·4·4) + 4·8·13 = 5024.
  const attn::Model model = attn::load_model_text(attn::find_example("gpt_tiny").json, "gpt_tiny");
  const attn::KvCacheDecoder decoder(model);
  CHECK(decoder.cost_at(3).with_cache == 1256);
  CHECK(decoder.cost_at(3).without_cache == 5024);
}

TEST_CASE("a model without a decoder or output head cannot generate", "[generate][errors]") {
  const attn::Model encoder = attn::load_model_text(attn::find_example("seed000").json, "seed000");
  CHECK_THROWS_AS(attn::KvCacheDecoder(encoder), attn::InputError);
}
