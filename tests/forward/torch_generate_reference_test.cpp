// Greedy generation of a decoder-only (GPT-2 style) model with the KV cache agrees with
// PyTorch float64 running the whole prefix every step: the same tokens, every step's
// logits to 1e-12 of their largest. Made once by tests/reference/make_torch_generate_cases.py.
#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include "attn/forward.h"
#include "attn/generate.h"
#include "attn/model_file.h"
#include "model/json_reader.h"
#include "reference_cases.h"

TEST_CASE("greedy generation with the cache agrees with PyTorch float64", "[generate][torch]") {
  const std::string dir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/torch_generate/";
  const auto names = attn_test::case_names(dir);
  REQUIRE(names.size() >= 2);
  for (const auto& name : names) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected = attn::parse_json(attn::read_text_file(dir + name + ".expected.json"), name);
      const attn::Model model = attn::load_model_file(dir + name + ".json");
      REQUIRE(model.decoder_only());
      attn::KvCacheDecoder decoder(model);
      attn::Trace prompt(!model.batched);
      prompt.keep_entries(false);
      prompt.set_sink([&](const attn::TraceRecord& r) { decoder.observe(r); });
      attn::run_model(model, prompt);
      const auto never = model.vocab.never_written_ids();
      std::size_t k = 0;
      for (const auto& step : expected.at("steps")) {
        INFO("step " << k);
        const std::vector<double> torch = step.at("logits").get<std::vector<double>>();
        const std::vector<double>& logits = decoder.logits();
        REQUIRE(logits.size() == torch.size());
        double scale = 0, worst = 0;
        for (double v : torch) scale = std::max(scale, std::fabs(v));
        for (std::size_t i = 0; i < torch.size(); ++i) worst = std::max(worst, std::fabs(logits[i] - torch[i]));
        CHECK(worst <= 1e-12 * scale);
        const attn::SamplingResult choice = attn::choose_next_token(logits.data(), logits.size(), {}, never, nullptr);
        REQUIRE(choice.id == step.at("id").get<std::size_t>());
        attn::Trace trace(true);
        trace.keep_entries(false);
        decoder.step(choice.id, trace);
        ++k;
      }
    }
  }
}
