// Greedy generation of decoder-only models with the KV cache agrees with PyTorch float64
// running the whole prefix every step: the same tokens, every step's logits to 1e-12 of their
// largest. GPT-2 style (gpt_*) made once by tests/reference/make_torch_generate_cases.py;
// Llama-style (llama_*: RMSNorm, RoPE, grouped-query attention, SwiGLU, a sliding window,
// final norm, tied or linear head) by tests/reference/make_torch_llama_generate_cases.py.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <catch2/catch.hpp>

#include "attn/forward.h"
#include "attn/generate.h"
#include "attn/model_file.h"
#include "model/json_reader.h"
#include "reference_cases.h"

TEST_CASE("greedy generation with the cache agrees with PyTorch float64", "[generate][torch]") {
  const std::string dir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/torch_generate/";
  const auto names = attn_test::case_names(dir);
  REQUIRE(names.size() >= 4);
  for (const auto& name : names) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected = attn::parse_json(attn::read_text_file(dir + name + ".expected.json"), name);
      const attn::LoadedModel model = attn::load_model_file(dir + name + ".json");
      REQUIRE(model.model.decoder_only());
      attn::KvCacheDecoder decoder(model.model);
      attn::Trace prompt(!model.input.batched);
      prompt.keep_entries(false);
      decoder.prefill(model.input, prompt);
      const auto never = model.model.vocab.never_written_ids();
      std::size_t k = 0;
      double case_worst = 0;
      for (const auto& step : expected.at("steps")) {
        INFO("step " << k);
        const std::vector<double> torch = step.at("logits").get<std::vector<double>>();
        const std::vector<double>& logits = decoder.logits();
        REQUIRE(logits.size() == torch.size());
        double scale = 0, worst = 0;
        for (double v : torch) scale = std::max(scale, std::fabs(v));
        for (std::size_t i = 0; i < torch.size(); ++i) worst = std::max(worst, std::fabs(logits[i] - torch[i]));
        CHECK(worst <= 1e-12 * scale);
        case_worst = std::max(case_worst, worst / scale);
        const attn::SamplingResult choice = attn::choose_next_token(logits.data(), logits.size(), {}, never, nullptr);
        REQUIRE(choice.id == step.at("id").get<std::size_t>());
        attn::Trace trace(true);
        trace.keep_entries(false);
        decoder.step(choice.id, trace);
        ++k;
      }
      if (std::getenv("ATTN_TEST_REPORT")) WARN(name << ": worst relative error of a step's logits " << case_worst);
    }
  }
}
