// Issue 34's decoder families read from their tiny checkpoints (make_hf_checkpoints.py):
// GPT-Neo, GPT-NeoX, Gemma, Phi and Mistral with its window. Their logits, attention
// weights and cached greedy generation are held to the float64 references with every other
// checkpoint in hf_model_test.cpp; here attn grad's loss and weight gradients against
// torch's autograd of the same references, each family's configuration as attn reads it
// (its steps' variants and the tensors each weight names), and what is refused by field.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include <catch2/catch.hpp>

#include "arch/checkpoint.h"
#include "attn/backward.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "checkpoint/json_file.h"
#include "checkpoint_test_files.h"
#include "reference_cases.h"
#include "tokenizers/word_tokenizer.h"
#include "trace_lookup.h"

namespace {

const std::string kDir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/hf_checkpoints/";

// The checkpoint's model with placeholder tokens w0 ... w{V-1} and `ids` as its input.
attn::LoadedModel read_case(const std::string& folder, const std::vector<std::size_t>& ids) {
  attn::CheckpointModel checkpoint = attn::load_hf_model(folder);
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

std::string text_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A copy of case `name` in a fresh folder, config.json's fields changed by `edit` and the
// safetensors file's text `from` replaced by `to` (the same length: the offsets hold).
struct EditedCase {
  attn_test::TempFolder folder;
  EditedCase(const std::string& name, const std::function<void(attn::Json&)>& edit, const std::string& from = "",
             const std::string& to = "") {
    attn::Json config = attn::read_json_object_file(kDir + name + "/config.json");
    edit(config);
    attn_test::write_bytes(folder.file("config.json"), config.dump());
    std::string weights = text_of(kDir + name + "/model.safetensors");
    if (!from.empty()) {
      const std::size_t at = weights.find(from);
      REQUIRE(at != std::string::npos);
      REQUIRE(from.size() == to.size());
      weights.replace(at, from.size(), to);
    }
    attn_test::write_bytes(folder.file("model.safetensors"), weights);
  }
  // The one-line message load_hf_model refuses the folder with.
  std::string refusal() const {
    try {
      attn::load_hf_model(folder.path());
    } catch (const attn::InputError& e) {
      return e.what();
    }
    return "(loaded)";
  }
};

}  // namespace

TEST_CASE("issue 34's families: attn grad's loss and weight gradients agree with torch's autograd",
          "[checkpoint][reference][backward]") {
  std::size_t run = 0;
  for (const auto& name : attn_test::case_names(kDir)) {
    const attn::Json expected = attn::read_json_object_file(kDir + name + "/expected.json");
    if (!expected.contains("grad")) continue;
    DYNAMIC_SECTION(name) {
      const auto ids = expected.at("ids").get<std::vector<std::size_t>>();
      attn::LoadedModel loaded = read_case(kDir + name, ids);
      const auto labels = expected.at("grad").at("labels").get<std::vector<std::size_t>>();
      loaded.input.labels = attn::Tensor({1, labels.size()}, {"B", "S"});
      for (std::size_t t = 0; t < labels.size(); ++t) loaded.input.labels.data[t] = static_cast<double>(labels[t]);
      attn::Trace trace(true);
      attn::run_model(loaded.model, loaded.input, trace);
      const double loss = attn::run_backward(loaded.model, loaded.input, trace);
      const double reference_loss = expected.at("grad").at("loss").get<double>();
      CHECK(std::fabs(loss - reference_loss) <= 1e-12 * std::fabs(reference_loss));
      double worst = 0;
      const attn::Json& weights = expected.at("grad").at("weights");
      REQUIRE(weights.size() >= 20);
      for (const auto& [weight, g] : weights.items()) {
        INFO(weight);
        const attn::TraceEntry* e = find_entry(trace, "grad." + weight);
        REQUIRE(e != nullptr);
        REQUIRE(e->tensor.shape == g.at("shape").get<attn::Shape>());
        const auto data = g.at("data").get<std::vector<double>>();
        double scale = 0, error = 0;
        for (std::size_t i = 0; i < data.size(); ++i) {
          scale = std::max(scale, std::fabs(data[i]));
          error = std::max(error, std::fabs(e->tensor.data[i] - data[i]));
        }
        // of the tensor's largest value, as the other gradient references (torch_grad)
        CHECK(error <= 1e-12 * scale);
        worst = std::max(worst, scale > 0 ? error / scale : error);
      }
      if (std::getenv("ATTN_TEST_REPORT")) WARN(name << ": worst weight gradient error " << worst << " of its largest");
    }
    ++run;
  }
  CHECK(run >= 6);
}

TEST_CASE("issue 34's families: each configuration as attn reads it", "[checkpoint][reference]") {
  const attn::CheckpointModel neo = attn::load_hf_model(kDir + "gpt_neo_bf16_local_first");
  const attn::ModelConfig& n = neo.model.config;
  CHECK(n.score_scale == attn::ScoreScale::None);
  CHECK(n.sliding_window == 2);
  CHECK(n.windowed_layers == std::vector<bool>{true, false, true});  // [["local"], 1], [["global", "local"], 1]
  CHECK(n.window_of(0) == 2);
  CHECK(n.window_of(1) == 0);
  CHECK(n.window_of(2) == 2);
  CHECK(neo.checkpoint_names.at("decoder.1.self_attention.W_q") == "transformer.h.1.attn.attention.q_proj.weight.T");
  CHECK(neo.model.decoder[0].self_attention.b_q.data.empty());  // q, k, v without bias
  CHECK(neo.checkpoint_names.at("decoder.0.self_attention.b_o") == "transformer.h.0.attn.attention.out_proj.bias");

  const attn::CheckpointModel neox = attn::load_hf_model(kDir + "gpt_neox_f32");
  CHECK(neox.model.config.rotary_dims == 2);  // int(8 x 0.25)
  CHECK(neox.model.config.parallel_residual);
  CHECK(!neox.model.output.tied);
  // query_key_value viewed (H, 3d, N): head h's query rows h·3d .. h·3d + d, then its keys', values'
  CHECK(neox.checkpoint_names.at("decoder.0.self_attention.W_k") ==
        "gpt_neox.layers.0.attention.query_key_value.weight.view(2, 24, -1)[:, 8:16].T");
  CHECK(neox.checkpoint_names.at("decoder.1.self_attention.b_v") ==
        "gpt_neox.layers.1.attention.query_key_value.bias.view(2, 24)[:, 16:24]");
  CHECK(neox.checkpoint_names.at("output.W") == "embed_out.weight.T");
  CHECK_FALSE(attn::load_hf_model(kDir + "gpt_neox_f64_sequential").model.config.parallel_residual);
  CHECK(attn::load_hf_model(kDir + "gpt_neox_bf16_full_rotary").model.config.rotary_dims == 0);  // all of d

  const attn::CheckpointModel gemma = attn::load_hf_model(kDir + "gemma_f32");
  const attn::ModelConfig& g = gemma.model.config;
  CHECK(g.norm == attn::Norm::RMSNormPlusOne);
  CHECK(g.activation == attn::Activation::GeGLUTanh);
  CHECK(g.scale_embeddings);
  CHECK(g.d_head == 6);  // head_dim, not hidden_size / heads
  CHECK(g.kv_heads() == 1);
  CHECK(gemma.model.output.tied);

  const attn::CheckpointModel phi = attn::load_hf_model(kDir + "phi_f32");
  CHECK(phi.model.config.parallel_residual);
  CHECK(phi.model.config.rotary_dims == 4);  // int(8 x 0.5)
  CHECK(phi.checkpoint_names.at("output.b") == "lm_head.bias");
  CHECK(phi.checkpoint_names.at("decoder.0.self_attention.W_o") == "model.layers.0.self_attn.dense.weight.T");
  CHECK(phi.model.decoder[0].norm2.gamma.data.empty());  // one norm per layer

  CHECK(attn::load_hf_model(kDir + "mistral_window_f32").model.config.sliding_window == 3);
  CHECK(attn::load_hf_model(kDir + "mistral_default_window_bf16").model.config.sliding_window == 4096);
  CHECK(attn::load_hf_model(kDir + "mistral_f32").model.config.sliding_window == 0);  // null: none
}

TEST_CASE("issue 34's families: what attn does not compute is refused by field", "[checkpoint][hostile]") {
  const auto set = [](const char* key, attn::Json value) { return [key, value](attn::Json& c) { c[key] = value; }; };
  CHECK_THAT(
      EditedCase("gpt_neo_f32", set("attention_types", attn::Json::parse(R"([[["global", "sparse"], 1]])"))).refusal(),
      Catch::Contains("config.json: attention_types: expected \"global\" or \"local\" (attn computes those), "
                      "found the string \"sparse\""));
  CHECK_THAT(EditedCase("gpt_neo_f32", set("attention_types", attn::Json::parse(R"([[["global"], 3]])"))).refusal(),
             Catch::Contains("attention_types: expected one attention type per layer (num_layers = 2), found 3"));
  CHECK_THAT(EditedCase("gpt_neox_f32", set("rotary_pct", 0.1)).refusal(),
             Catch::Contains("rotary_pct: expected a fraction of the head_size 8 that turns an even number"));
  CHECK_THAT(EditedCase("gpt_neox_f32", set("rope_scaling", attn::Json::parse(R"({"type": "linear", "factor": 2.0})")))
                 .refusal(),
             Catch::Contains("rope_scaling: expected null"));
  CHECK_THAT(EditedCase("gemma_f32", set("hidden_activation", "silu")).refusal(),
             Catch::Contains("hidden_activation: \"silu\" is not supported"));
  CHECK_THAT(EditedCase("phi_f32", set("qk_layernorm", true)).refusal(),
             Catch::Contains("qk_layernorm: true is not supported"));
  CHECK_THAT(EditedCase("phi_f32", set("tie_word_embeddings", true)).refusal(),
             Catch::Contains("tie_word_embeddings: true is not supported"));
  CHECK_THAT(EditedCase("mistral_window_f32", set("sliding_window", 0)).refusal(), Catch::Contains("sliding_window"));
  // a weight stored as an integer type: refused by its dtype, naming the tensor
  const std::string fused = "\"gpt_neox.layers.0.attention.query_key_value.weight\":{\"dtype\":\"";
  CHECK_THAT(EditedCase(
                 "gpt_neox_f32", [](attn::Json&) {}, fused + "F32", fused + "I32")
                 .refusal(),
             Catch::Contains("gpt_neox.layers.0.attention.query_key_value.weight: dtype I32 is not supported"));
}

TEST_CASE("issue 34's families: the known buffers are in the files and never read", "[checkpoint][reference]") {
  // GPT-Neo's boolean attn.attention.bias and masked_bias, NeoX's attention.bias,
  // masked_bias and rotary_emb.inv_freq lie in the tiny files as the old checkpoints keep
  // them; no weight names one.
  for (const char* name : {"gpt_neo_f32", "gpt_neox_f32"}) {
    const std::string weights = text_of(kDir + name + "/model.safetensors");
    CHECK(weights.find("masked_bias") != std::string::npos);
    CHECK(weights.find("\"BOOL\"") != std::string::npos);
    const attn::CheckpointModel m = attn::load_hf_model(kDir + name);
    for (const auto& [parameter, tensor] : m.checkpoint_names) {
      INFO(parameter << " <- " << tensor);
      CHECK(tensor.find("masked_bias") == std::string::npos);
      CHECK(tensor.find("inv_freq") == std::string::npos);
      CHECK(tensor.find("attention.bias") == std::string::npos);
    }
  }
}
