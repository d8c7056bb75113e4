// The memory a checkpoint is estimated to need before its weights are read, when its
// weight matrices will stay as stored: counted at their dtype's bytes as the safetensors
// headers give them (worked by hand below), not as float64; and ATTN_WIDEN_WEIGHTS, which
// widens them at load all the same (the CLI's tests compare both ways with it).
#include <stdlib.h>

#include <cstdint>
#include <string>

#include <catch2/catch.hpp>

#include "arch/checkpoint.h"
#include "attn/error.h"
#include "attn/model_file.h"
#include "checkpoint_test_files.h"

namespace {

const std::string kDir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/hf_checkpoints/";

// What load_hf_model's estimate from config.json counts with every weight as float64: the
// run of one token, the untied head besides.
std::uint64_t float64_need(const attn::CheckpointModel& c) {
  attn::RunSize size;
  size.encoder_layers = 0;
  size.decoder_layers = c.model.decoder.size();
  size.target_len = 1;
  size.vocab = c.vocab_size;
  size.position_rows = c.model.config.max_len;
  const std::uint64_t head = c.model.output.tied ? 0 : 8 * c.vocab_size * c.model.config.d_model;
  return attn::estimate_run_bytes(c.model.config, size) + head;
}

// The message of the refusal, or "" when the checkpoint loads.
std::string refusal(const std::string& name, bool as_stored, std::uint64_t limit) {
  attn::LoadOptions options;
  options.weights_as_stored = as_stored;
  options.max_memory_bytes = limit;
  try {
    attn::load_hf_model(kDir + name, options);
  } catch (const attn::InputError& e) {
    return e.message();
  }
  return "";
}

struct EnvironmentVariable {
  explicit EnvironmentVariable(const char* value) { setenv("ATTN_WIDEN_WEIGHTS", value, 1); }
  ~EnvironmentVariable() { unsetenv("ATTN_WIDEN_WEIGHTS"); }
};

}  // namespace

TEST_CASE("checkpoint estimate: stored matrices count at their dtype's bytes before any is read",
          "[checkpoint][memory]") {
  struct Case {
    const char* name;
    const char* dtype;
    std::uint64_t fewer;  // bytes fewer than float64's estimate
  };
  // gpt2_f16_prefixed: wte 16x8 = 128 numbers; each of 2 layers c_attn 8x24 = 192, c_proj
  // 8x8 = 64, c_fc 8x32 = 256 and mlp.c_proj 32x8 = 256, 768 a layer; 128 + 2 x 768 = 1664
  // F16 numbers of 2 bytes against float64's 8: 6 x 1664 = 9984 bytes fewer (wpe and the
  // vectors are widened at load, as before).
  // llama_bf16, untied: embed_tokens 16x8 = 128; each of 2 layers q_proj 8x8 = 64, k_proj and
  // v_proj 4x8 = 32 each, o_proj 64, gate_proj, up_proj and down_proj 12x8 = 96 each, 480 a
  // layer; lm_head 16x8 = 128: 128 + 960 + 128 = 1216 BF16 numbers, 6 x 1216 = 7296 fewer.
  // gpt2_f64: the same 1664 numbers, F64, 8 bytes each: none fewer.
  for (const Case& c :
       {Case{"gpt2_f16_prefixed", "F16", 9984}, Case{"llama_bf16", "BF16", 7296}, Case{"gpt2_f64", "F64", 0}}) {
    DYNAMIC_SECTION(c.name) {
      const std::uint64_t need64 = float64_need(attn::load_hf_model(kDir + c.name));
      const std::uint64_t need = need64 - c.fewer;
      CHECK(refusal(c.name, true, need).empty());
      CHECK(refusal(c.name, true, need - 1).find(std::string("with its matrices as stored (") + c.dtype + ")") !=
            std::string::npos);
      // widened at load: float64's estimate, as before
      CHECK(refusal(c.name, false, need64).empty());
      CHECK(refusal(c.name, false, need64 - 1).find(" as float64 (layers=2, d_model=8, ") != std::string::npos);
      // before the headers, a quarter of float64's estimate: no stored number takes fewer
      // than 2 bytes
      CHECK(refusal(c.name, true, need64 / 4 - 1)
                .find("or more (its matrices kept as stored, at least 2 bytes a "
                      "number) (layers=2,") != std::string::npos);
    }
  }
}

TEST_CASE("checkpoint estimate: 10^9 layers are refused before any file is opened, weights stored or not",
          "[checkpoint][memory]") {
  attn_test::TempFolder folder;  // a config alone
  attn_test::write_bytes(folder.file("config.json"),
                         R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 32000, "hidden_size": 64,
                            "intermediate_size": 128, "num_hidden_layers": 1000000000, "num_attention_heads": 4})");
  attn::LoadOptions options;
  options.weights_as_stored = true;
  options.max_memory_bytes = 1ULL << 30;
  try {
    attn::load_hf_model(folder.path(), options);
    FAIL("loaded");
  } catch (const attn::InputError& e) {
    CHECK(e.json_path() == "num_hidden_layers");
    CHECK(e.message().find("this model's weights alone would need about ") == 0);
    CHECK(e.message().find("or more (its matrices kept as stored, at least 2 bytes a number) (layers=1000000000") !=
          std::string::npos);
  }
}

TEST_CASE("checkpoint estimate: ATTN_WIDEN_WEIGHTS widens the weights at load", "[checkpoint][memory]") {
  attn::LoadOptions options;
  options.weights_as_stored = true;
  CHECK(attn::load_hf_model(kDir + "llama_f32", options).model.decoder[0].self_attention.W_q.stored);
  {
    const EnvironmentVariable widen("1");
    const attn::CheckpointModel widened = attn::load_hf_model(kDir + "llama_f32", options);
    CHECK(widened.model.decoder[0].self_attention.W_q.stored == nullptr);
    CHECK(widened.model.decoder[0].self_attention.W_q.data.size() == 64);
    CHECK(widened.model.embedding.stored == nullptr);
  }
  {
    const EnvironmentVariable unset("0");
    CHECK(attn::load_hf_model(kDir + "llama_f32", options).model.embedding.stored);
  }
  // attn grad's run differentiates the weights: widened whatever weights_as_stored says
  options.backward = true;
  CHECK(attn::load_hf_model(kDir + "llama_f32", options).model.embedding.stored == nullptr);
}

TEST_CASE("checkpoint estimate: an encoder's layers (BERT's) are counted as encoder layers", "[checkpoint][memory]") {
  // bert_model_f64: 2 encoder layers, no head. Counted as decoder layers (self- and
  // cross-attention each), the estimate would be larger, and this limit refused.
  const attn::CheckpointModel bert = attn::load_hf_model(kDir + "bert_model_f64");
  REQUIRE(bert.model.encoder.size() == 2);
  attn::RunSize size;
  size.encoder_layers = 2;
  size.decoder_layers = 0;
  size.target_len = 1;
  size.vocab = bert.vocab_size;
  size.position_rows = bert.model.config.max_len;
  const std::uint64_t need = attn::estimate_run_bytes(bert.model.config, size);
  CHECK(refusal("bert_model_f64", false, need).empty());
  CHECK(refusal("bert_model_f64", false, need - 1).find(" as float64 (layers=2, d_model=8, ") != std::string::npos);
}
