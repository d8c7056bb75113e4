// config.json (and generation_config.json) read as transformers' configuration classes
// read them, and every unusable field refused in one line naming the file and the field.
#include "arch/family.h"

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "checkpoint/checkpoint_test_files.h"

using attn_test::TempFolder;
using attn_test::write_bytes;

namespace {

constexpr const char* kGpt2 =
    R"({"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": 50257, "n_positions": 1024,
        "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": null, "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-05, "bos_token_id": 50256, "eos_token_id": 50256})";

constexpr const char* kLlama3 =
    R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 8192,
        "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
        "max_position_embeddings": 131072, "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "hidden_act": "silu",
        "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "tie_word_embeddings": true, "eos_token_id": 128001})";

attn::CheckpointConfig read(const std::string& config, const std::string& generation = "") {
  TempFolder folder;
  write_bytes(folder.file("config.json"), config);
  if (!generation.empty()) write_bytes(folder.file("generation_config.json"), generation);
  return attn::read_checkpoint_config(folder.path());
}

// The field and message of the InputError reading `config` throws.
std::pair<std::string, std::string> refusal(const std::string& config) {
  TempFolder folder;
  write_bytes(folder.file("config.json"), config);
  try {
    attn::read_checkpoint_config(folder.path());
  } catch (const attn::InputError& e) {
    CHECK(e.file() == folder.file("config.json"));
    return {e.json_path(), e.message()};
  }
  FAIL("accepted " << config);
  return {};
}

// `base` with one field replaced (or added): `"key": value`.
std::string with(std::string base, const std::string& key, const std::string& value) {
  const std::string quoted = "\"" + key + "\": ";
  const std::size_t at = base.find(quoted);
  if (at == std::string::npos) return base.substr(0, base.size() - 1) + ", " + quoted + value + "}";
  std::size_t end = at + quoted.size();
  int depth = 0;
  while (end < base.size() && (depth > 0 || (base[end] != ',' && base[end] != '}'))) {
    if (base[end] == '{' || base[end] == '[') ++depth;
    if (base[end] == '}' || base[end] == ']') --depth;
    ++end;
  }
  return base.substr(0, at) + quoted + value + base.substr(end);
}

}  // namespace

TEST_CASE("config.json: GPT-2's fields and GPT2Config's defaults", "[checkpoint][config]") {
  const attn::CheckpointConfig c = read(kGpt2);
  CHECK(std::string(c.family->name) == "gpt2");
  CHECK(c.hf_class == "GPT2LMHeadModel");
  CHECK(c.vocab_size == 50257);
  CHECK(c.model.d_model == 768);
  CHECK(c.num_layers == 12);
  CHECK(c.model.num_heads == 12);
  CHECK(c.model.kv_heads() == 12);
  CHECK(c.model.d_head == 64);
  CHECK(c.model.d_ff == 3072);  // n_inner null: 4 n_embd
  CHECK(c.max_positions == 1024);
  CHECK(c.model.layer_norm_eps == 1e-5);
  CHECK(c.model.activation == attn::Activation::GELUTanh);  // gelu_new
  CHECK(c.tie_word_embeddings);                             // GPT2Config's default
  CHECK(c.eos_token_ids == std::vector<std::size_t>{50256});
}

TEST_CASE("config.json: Llama 3.2's grouped heads, head_dim, llama3 RoPE and tied head", "[checkpoint][config]") {
  const attn::CheckpointConfig c = read(kLlama3, R"({"eos_token_id": [128001, 128008, 128009], "do_sample": true})");
  CHECK(std::string(c.family->name) == "llama");
  CHECK(c.model.num_heads == 32);
  CHECK(c.model.kv_heads() == 8);
  CHECK(c.model.d_head == 64);
  CHECK(c.model.d_ff == 8192);
  CHECK(c.model.layer_norm_eps == 1e-5);
  CHECK(c.model.rope_theta == 500000.0);
  CHECK(c.model.rope_scaling.llama3);
  CHECK(c.model.rope_scaling.factor == 32.0);
  CHECK(c.model.rope_scaling.low_freq_factor == 1.0);
  CHECK(c.model.rope_scaling.high_freq_factor == 4.0);
  CHECK(c.model.rope_scaling.original_max_position_embeddings == 8192.0);
  CHECK(c.tie_word_embeddings);
  // generation_config.json's eos_token_id wins over config.json's
  CHECK(c.eos_token_ids == std::vector<std::size_t>{128001, 128008, 128009});
  // LlamaConfig's defaults: untied head, head_dim = hidden_size / heads, KV heads = heads
  const std::string plain =
      R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 32000, "hidden_size": 64, "intermediate_size": 128,
          "num_hidden_layers": 2, "num_attention_heads": 4})";
  const attn::CheckpointConfig d = read(plain);
  CHECK_FALSE(d.tie_word_embeddings);
  CHECK(d.model.d_head == 16);
  CHECK(d.model.kv_heads() == 4);
  CHECK(d.model.rope_theta == 10000.0);
  CHECK(d.model.layer_norm_eps == 1e-6);
  CHECK_FALSE(d.model.rope_scaling.llama3);
  CHECK(d.eos_token_ids.empty());
  CHECK(read(with(plain, "architectures", R"(["Qwen3ForCausalLM"])")).model.d_head == 128);  // Qwen3Config's default
  CHECK(std::string(read(with(with(plain, "architectures", R"(["MistralForCausalLM"])"), "sliding_window", "null"))
                        .family->name) == "llama");
  // MistralConfig's sliding_window: 4096 when absent, none when null, W when given
  const std::string mistral = with(plain, "architectures", R"(["MistralForCausalLM"])");
  CHECK(read(mistral).model.sliding_window == 4096);
  CHECK(read(with(mistral, "sliding_window", "null")).model.sliding_window == 0);
  CHECK(read(with(mistral, "sliding_window", "3")).model.sliding_window == 3);
  CHECK(read(with(plain, "sliding_window", "3")).model.sliding_window == 0);  // Llama has none
}

TEST_CASE("config.json: an unsupported architecture names itself and the supported ones", "[checkpoint][config]") {
  const auto [path, message] = refusal(with(kGpt2, "architectures", R"(["XLNetLMHeadModel"])"));
  CHECK(path == "architectures[0]");
  CHECK(message ==
        "the architecture \"XLNetLMHeadModel\" is not supported (attn reads GPT2LMHeadModel, LlamaForCausalLM, "
        "MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, GPTNeoForCausalLM, GPTNeoXForCausalLM, "
        "GemmaForCausalLM, PhiForCausalLM, BertForMaskedLM, BertForPreTraining, BertModel, MarianMTModel, "
        "BartForConditionalGeneration)");
  CHECK(refusal(with(kGpt2, "architectures", "null")).first == "architectures");
}

TEST_CASE("config.json: sizes that do not fit together or are out of range are refused", "[checkpoint][config]") {
  using Refusal = std::pair<std::string, std::string>;
  CHECK(refusal(with(kGpt2, "n_head", "5")) == Refusal{"n_head", "expected a divisor of n_embd = 768, found 5"});
  CHECK(refusal(with(kGpt2, "vocab_size", "1099511627776")) ==
        Refusal{"vocab_size", "expected at most 16777216, found 1099511627776"});
  CHECK(refusal(with(kGpt2, "n_layer", "\"12\"")) ==
        Refusal{"n_layer", "expected a positive integer, found the string \"12\""});
  CHECK(refusal(with(kGpt2, "n_layer", "12.0")) ==
        Refusal{"n_layer", "expected a positive integer, found the number 12.0"});
  CHECK(refusal(with(kGpt2, "n_embd", "-768")) ==
        Refusal{"n_embd", "expected a positive integer, found the number -768"});
  CHECK(refusal(with(kLlama3, "num_key_value_heads", "5")) ==
        Refusal{"num_key_value_heads", "expected a divisor of num_attention_heads = 32, found 5"});
  CHECK(refusal(with(kLlama3, "head_dim", "63")) ==
        Refusal{"head_dim", "expected an even size (RoPE turns pairs), found 63"});
  CHECK(refusal(with(kGpt2, "eos_token_id", "50257")) ==
        Refusal{"eos_token_id", "expected token ids from 0 to 50256, found the number 50257"});
  const std::string no_vocab =
      R"({"architectures": ["GPT2LMHeadModel"], "n_positions": 8, "n_embd": 8, "n_layer": 1, "n_head": 2})";
  CHECK(refusal(no_vocab) == Refusal{"vocab_size", "missing (this field is required)"});
}

TEST_CASE("config.json: what attn does not compute is refused by name", "[checkpoint][config]") {
  using Refusal = std::pair<std::string, std::string>;
  CHECK(refusal(with(kLlama3, "rope_scaling", R"({"rope_type": "yarn", "factor": 4.0})")) ==
        Refusal{"rope_scaling.rope_type",
                "\"yarn\" is not supported (attn computes RoPE as written, or with rope_type \"llama3\")"});
  CHECK(refusal(with(kLlama3, "rope_scaling", R"({"type": "linear", "factor": 4.0})")).second.find("\"linear\"") == 0);
  CHECK(refusal(with(kLlama3, "hidden_act", "\"gelu\"")) ==
        Refusal{"hidden_act", "\"gelu\" is not supported (attn's SwiGLU gates with silu)"});
  CHECK(refusal(with(kLlama3, "mlp_bias", "true")).first == "mlp_bias");
  CHECK(refusal(with(kGpt2, "scale_attn_by_inverse_layer_idx", "true")).first == "scale_attn_by_inverse_layer_idx");
  CHECK(refusal(with(kGpt2, "activation_function", "\"swish\"")).first == "activation_function");
  const std::string mistral = with(kLlama3, "architectures", R"(["MistralForCausalLM"])");
  CHECK(refusal(with(mistral, "sliding_window", "0")) ==
        Refusal{"sliding_window", "expected a positive integer, found the number 0"});
  CHECK(refusal(with(mistral, "sliding_window", "\"4096\"")).first == "sliding_window");
  CHECK(refusal(with(with(kLlama3, "architectures", R"(["Qwen2ForCausalLM"])"), "use_sliding_window", "true")).first ==
        "use_sliding_window");
}

TEST_CASE("config.json: not JSON, or missing, is one line naming it", "[checkpoint][config]") {
  CHECK(refusal("{\"architectures\": [").second.find("malformed JSON") == 0);
  CHECK(refusal("[]").second == "expected a JSON object, found an array of 0");
  TempFolder folder;
  try {
    attn::read_checkpoint_config(folder.path());
    FAIL("no config.json accepted");
  } catch (const attn::InputError& e) {
    CHECK(e.file() == folder.path());
    CHECK(e.message() == "found no config.json: expected a Hugging Face model folder");
  }
}

TEST_CASE("config.json: BERT with BertConfig's defaults, and what attn does not compute refused by field",
          "[checkpoint][config][bert]") {
  // bert-base-uncased's config.json as the Hub has it (its fields are BertConfig's defaults)
  const std::string base =
      R"({"architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": false,
          "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 768, "initializer_range": 0.02,
          "intermediate_size": 3072, "layer_norm_eps": 1e-12, "max_position_embeddings": 512,
          "model_type": "bert", "num_attention_heads": 12, "num_hidden_layers": 12, "pad_token_id": 0,
          "position_embedding_type": "absolute", "transformers_version": "4.6.0.dev0", "type_vocab_size": 2,
          "use_cache": true, "vocab_size": 30522})";
  const attn::CheckpointConfig c = read(base);
  CHECK(std::string(c.family->name) == "bert");
  CHECK(c.model.architecture == attn::Architecture::Encoder);
  CHECK_FALSE(c.model.causal);
  CHECK_FALSE(c.model.norm_first);
  CHECK(c.model.activation == attn::Activation::GELU);
  CHECK(c.model.layer_norm_eps == 1e-12);
  CHECK(c.model.d_head == 64);
  CHECK(c.tie_word_embeddings);
  CHECK(c.max_positions == 512);
  // the defaults, from an almost empty file: BertConfig()'s sizes
  const attn::CheckpointConfig d = read(R"({"architectures": ["BertModel"]})");
  CHECK(d.vocab_size == 30522);
  CHECK(d.model.d_model == 768);
  CHECK(d.num_layers == 12);
  CHECK(d.model.d_ff == 3072);
  CHECK(d.model.layer_norm_eps == 1e-12);
  using Refusal = std::pair<std::string, std::string>;
  CHECK(refusal(with(base, "position_embedding_type", "\"relative_key\"")) ==
        Refusal{"position_embedding_type",
                "\"relative_key\" is not supported (attn adds learned absolute positions: \"absolute\")"});
  CHECK(refusal(with(base, "is_decoder", "true")).first == "is_decoder");
  CHECK(refusal(with(base, "add_cross_attention", "true")).first == "add_cross_attention");
  CHECK(refusal(with(base, "hidden_act", "\"tanh\"")).first == "hidden_act");
  CHECK(refusal(with(base, "num_attention_heads", "5")) ==
        Refusal{"num_attention_heads", "expected a divisor of hidden_size = 768, found 5"});
  CHECK(refusal(with(base, "type_vocab_size", "0")).first == "type_vocab_size");
}
