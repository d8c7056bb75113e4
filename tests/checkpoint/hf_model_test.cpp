// Hugging Face checkpoints read into attn's Model and run by attn's forward pass: the
// logits and every attention weight agree with a float64 evaluation of the architecture as
// transformers' modeling code defines it, to 1e-12 (tests/reference/make_hf_checkpoints.py
// wrote the tiny checkpoints and the references, and checked the references once against
// attn's own forward on the same models written in attn's JSON schema).
#include "arch/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/generate.h"
#include "attn/model_file.h"
#include "attn/parameters.h"
#include "attn/trace.h"
#include "checkpoint/json_file.h"
#include "reference_cases.h"
#include "tokenizers/word_tokenizer.h"
#include "trace_lookup.h"

namespace {

const std::string kDir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/hf_checkpoints/";

// The checkpoint's model, given placeholder tokens w0 ... w{V-1} (the tokenizer's job) and
// the reference's ids as its input.
attn::LoadedModel model_reading(const std::string& name, const std::vector<std::size_t>& ids,
                                const attn::LoadOptions& options = {}) {
  attn::CheckpointModel checkpoint = attn::load_hf_model(kDir + name, options);
  attn::LoadedModel loaded;
  loaded.model = std::move(checkpoint.model);
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < checkpoint.vocab_size; ++i) tokens.push_back("w" + std::to_string(i));
  loaded.model.vocab = attn::Vocabulary(tokens);
  loaded.model.tokenizer = std::make_shared<const attn::WordTokenizer>(loaded.model.vocab);
  loaded.input.batched = false;
  loaded.input.source_tokens.tokens.emplace_back();
  for (const std::size_t id : ids) loaded.input.source_tokens.tokens[0].push_back(tokens.at(id));
  return loaded;
}

// The largest |attn - reference| over a nested JSON array and the flat tensor.
double worst_error(const attn::Json& expected, const attn::Tensor& actual) {
  std::vector<double> flat;
  const std::function<void(const attn::Json&)> flatten = [&](const attn::Json& v) {
    if (v.is_array())
      for (const auto& x : v) flatten(x);
    else
      flat.push_back(v.get<double>());
  };
  flatten(expected);
  REQUIRE(flat.size() == actual.size());
  double worst = 0;
  for (std::size_t i = 0; i < flat.size(); ++i) worst = std::max(worst, std::fabs(flat[i] - actual.data[i]));
  return worst;
}

}  // namespace

TEST_CASE("Hugging Face checkpoints: logits and attention weights agree with the float64 reference",
          "[checkpoint][reference]") {
  const auto names = attn_test::case_names(kDir);
  REQUIRE(names.size() >= 30);
  std::size_t run = 0;
  for (const auto& name : names) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected = attn::read_json_object_file(kDir + name + "/expected.json");
      const attn::LoadedModel loaded = model_reading(name, expected.at("ids").get<std::vector<std::size_t>>());
      attn::Trace trace(true);
      attn::run_model(loaded.model, loaded.input, trace);
      const attn::TraceEntry* logits = find_entry(trace, "output.logits");
      REQUIRE(logits != nullptr);
      const double logit_error = worst_error(expected.at("logits"), logits->tensor);
      CHECK(logit_error <= 1e-12);
      double attention_error = 0;
      const auto& layers = expected.at("attention_weights");
      REQUIRE(layers.size() == loaded.model.decoder.size());
      for (std::size_t i = 0; i < layers.size(); ++i) {
        const attn::TraceEntry* weights = find_entry(trace, "decoder." + std::to_string(i) + ".self_attention.weights");
        REQUIRE(weights != nullptr);
        attention_error = std::max(attention_error, worst_error(layers[i], weights->tensor));
      }
      CHECK(attention_error <= 1e-12);
      if (std::getenv("ATTN_TEST_REPORT"))
        WARN(name << ": worst logit error " << logit_error << ", worst attention weight error " << attention_error);
    }
    ++run;
  }
  CHECK(run >= 16);
}

TEST_CASE("Hugging Face checkpoints: greedy generation with the KV cache agrees with the reference",
          "[checkpoint][reference]") {
  // The reference runs the whole prefix every step; attn runs the prompt once, then one
  // position per step through the cache: the same picks, every step's logits within 1e-12.
  std::size_t run = 0;
  for (const auto& name : attn_test::case_names(kDir)) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected = attn::read_json_object_file(kDir + name + "/expected.json");
      const attn::LoadedModel loaded = model_reading(name, expected.at("prompt").get<std::vector<std::size_t>>());
      const attn::Model& model = loaded.model;
      attn::KvCacheDecoder decoder(model);
      attn::Trace prompt(true);
      prompt.keep_entries(false);
      decoder.prefill(loaded.input, prompt);
      std::size_t k = 0;
      for (const auto& step : expected.at("greedy")) {
        INFO("step " << k);
        const std::vector<double> reference = step.at("logits").get<std::vector<double>>();
        const std::vector<double>& logits = decoder.logits();
        REQUIRE(logits.size() == reference.size());
        double worst = 0;
        for (std::size_t i = 0; i < logits.size(); ++i) worst = std::max(worst, std::fabs(logits[i] - reference[i]));
        CHECK(worst <= 1e-12);
        const attn::SamplingResult choice = attn::choose_next_token(logits.data(), logits.size(), {}, {}, nullptr);
        REQUIRE(choice.id == step.at("id").get<std::size_t>());
        attn::Trace trace(true);
        trace.keep_entries(false);
        decoder.step(choice.id, trace);
        ++k;
      }
      CHECK(k == 5);
    }
    ++run;
  }
  CHECK(run >= 16);
}

TEST_CASE("Hugging Face checkpoints: each weight names the checkpoint tensor it was read from",
          "[checkpoint][reference]") {
  const attn::CheckpointModel gpt2 = attn::load_hf_model(kDir + "gpt2_f32_sharded");
  CHECK(gpt2.architecture == "GPT2LMHeadModel");
  CHECK(gpt2.eos_token_ids == std::vector<std::size_t>{15});
  CHECK(gpt2.checkpoint_names.at("decoder.0.self_attention.W_q") == "transformer.h.0.attn.c_attn.weight[:, 0:8]");
  CHECK(gpt2.checkpoint_names.at("decoder.1.self_attention.W_v") == "transformer.h.1.attn.c_attn.weight[:, 16:24]");
  CHECK(gpt2.checkpoint_names.at("decoder.1.self_attention.b_k") == "transformer.h.1.attn.c_attn.bias[8:16]");
  CHECK(gpt2.checkpoint_names.at("positions") == "transformer.wpe.weight");
  CHECK(gpt2.model.output.tied);
  const attn::CheckpointModel llama = attn::load_hf_model(kDir + "llama_f32");
  CHECK(llama.checkpoint_names.at("decoder.0.self_attention.W_k") == "model.layers.0.self_attn.k_proj.weight.T");
  CHECK(llama.checkpoint_names.at("output.W") == "lm_head.weight.T");
  CHECK(llama.eos_token_ids == std::vector<std::size_t>{2, 5});  // generation_config.json's
  // Every weight of the model has its source, under the name attn gives the parameter.
  for (const auto* m : {&gpt2, &llama}) {
    const auto list = attn::parameters(m->model);
    CHECK(list.size() == m->checkpoint_names.size());
    for (const auto& p : list) CHECK(m->checkpoint_names.count(attn::parameter_name(p.id)) == 1);
  }
  // The old GPT-2 files' keys have no "transformer." and carry attn.bias buffers, unread.
  const attn::CheckpointModel old = attn::load_hf_model(kDir + "gpt2_f32");
  CHECK(old.checkpoint_names.at("embedding") == "wte.weight");
}

TEST_CASE("Hugging Face checkpoints: Qwen3's q_norm/k_norm and llama3 RoPE map onto their steps",
          "[checkpoint][reference]") {
  const attn::CheckpointModel qwen3 = attn::load_hf_model(kDir + "qwen3_f32");
  CHECK(qwen3.model.config.qk_norm);
  CHECK(qwen3.model.config.d_head == 4);  // head_dim, not hidden_size / heads
  CHECK(qwen3.checkpoint_names.at("decoder.1.self_attention.q_norm") == "model.layers.1.self_attn.q_norm.weight");
  CHECK(qwen3.checkpoint_names.at("decoder.0.self_attention.k_norm") == "model.layers.0.self_attn.k_norm.weight");
  CHECK(qwen3.model.decoder[0].self_attention.q_norm.shape == attn::Shape{4});
  const attn::CheckpointModel llama3 = attn::load_hf_model(kDir + "llama3_rope_f32");
  CHECK_FALSE(llama3.model.config.qk_norm);
  const attn::RopeScaling& r = llama3.model.config.rope_scaling;
  CHECK(r.llama3);
  CHECK(r.factor == 8.0);
  CHECK(r.low_freq_factor == 1.0);
  CHECK(r.high_freq_factor == 4.0);
  CHECK(r.original_max_position_embeddings == 4.0);
  CHECK(llama3.model.config.rope_theta == 500000.0);
}

TEST_CASE("Hugging Face checkpoints: weights kept as stored give the bits of weights widened at load",
          "[checkpoint][reference]") {
  // Every case (F64, F32, F16, BF16; GPT-2's columns of c_attn, Llama's transposed
  // nn.Linear, tied and untied heads): every tensor of the run and every cached generation
  // step the same to the bit, the matrices left in the mapped file.
  attn::LoadOptions as_stored;
  as_stored.weights_as_stored = true;
  std::size_t run = 0;
  for (const auto& name : attn_test::case_names(kDir)) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected = attn::read_json_object_file(kDir + name + "/expected.json");
      const auto ids = expected.at("ids").get<std::vector<std::size_t>>();
      const attn::LoadedModel widened = model_reading(name, ids), stored = model_reading(name, ids, as_stored);
      const attn::AttentionWeights& w = stored.model.decoder[0].self_attention;
      CHECK((w.W_o.stored && stored.model.embedding.stored));
      // GPT-NeoX's q, k and v, rows of each head's part of the fused query_key_value, are
      // widened at load (StoredLayout::HeadRows); every other matrix stays as stored
      if (name.rfind("gpt_neox", 0) == 0)
        CHECK((w.W_q.stored == nullptr && !w.W_q.data.empty()));
      else
        CHECK((w.W_q.stored && w.W_q.data.empty()));
      CHECK(stored.model.decoder[0].norm1.gamma.stored == nullptr);  // vectors are widened
      CHECK(stored.model.embedding.shape == widened.model.embedding.shape);
      CHECK(attn::parameter_count(stored.model) == attn::parameter_count(widened.model));
      CHECK(attn::widened(w.W_q).data == widened.model.decoder[0].self_attention.W_q.data);
      // The memory estimate counts the stored matrices at their bytes in the file.
      const attn::RunSize size_a = attn::run_size_of(widened.model, widened.input);
      const attn::RunSize size_b = attn::run_size_of(stored.model, stored.input);
      CHECK(size_a.stored_numbers == 0);
      CHECK(size_b.stored_numbers >= stored.model.embedding.size());
      CHECK(attn::estimate_run_bytes(stored.model.config, size_b) ==
            attn::estimate_run_bytes(widened.model.config, size_a) - 8 * size_b.stored_numbers + size_b.stored_bytes);
      attn::Trace a(true), b(true);
      attn::run_model(widened.model, widened.input, a);
      attn::run_model(stored.model, stored.input, b);
      REQUIRE(a.entries().size() == b.entries().size());
      for (std::size_t i = 0; i < a.entries().size(); ++i) {
        INFO(a.entries()[i].name);
        CHECK(a.entries()[i].tensor.data == b.entries()[i].tensor.data);
      }
      // generation from the reference's prompt (within the positions), through the cache
      const auto prompt = expected.at("prompt").get<std::vector<std::size_t>>();
      const attn::LoadedModel pa = model_reading(name, prompt), pb = model_reading(name, prompt, as_stored);
      attn::KvCacheDecoder cached_a(pa.model), cached_b(pb.model);
      for (auto* pair : {&cached_a, &cached_b}) {
        attn::Trace t(true);
        t.keep_entries(false);
        pair->prefill(pa.input, t);
      }
      for (std::size_t step = 0; step < 3; ++step) {
        attn::Trace t(true);
        t.keep_entries(false);
        const std::size_t next = (ids.back() + step) % widened.model.vocab.size();
        CHECK(cached_a.step(next, t) == cached_b.step(next, t));
      }
    }
    ++run;
  }
  CHECK(run >= 16);
}
