#include "checkpoint/hf_config.h"

#include <fmt/format.h>

#include "attn/error.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/hf_config_fields.h"

namespace attn {

const char* const kSupportedArchitectures =
    "GPT2LMHeadModel, LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM";

namespace {

// Sizes past these are not a real model's (the largest vocabularies are about 2^18 rows);
// the memory estimate then refuses what would not fit.
constexpr std::size_t kMaxVocab = std::size_t{1} << 24;
constexpr std::size_t kMaxWidth = std::size_t{1} << 20;

HfFamily family_of(const ConfigFields& fields, std::string* architecture) {
  const Json* list = fields.get("architectures");
  if (!list) fields.fail("architectures", fmt::format("missing: expected one of {}", kSupportedArchitectures));
  if (!list->is_array() || list->empty() || !(*list)[0].is_string())
    fields.fail("architectures", fmt::format("expected a list holding one of {}, found {}", kSupportedArchitectures,
                                             describe_config_value(*list)));
  *architecture = (*list)[0].get<std::string>();
  if (*architecture == "GPT2LMHeadModel") return HfFamily::Gpt2;
  if (*architecture == "LlamaForCausalLM" || *architecture == "MistralForCausalLM") return HfFamily::Llama;
  if (*architecture == "Qwen2ForCausalLM") return HfFamily::Qwen2;
  if (*architecture == "Qwen3ForCausalLM") return HfFamily::Qwen3;
  throw InputError(
      fields.file(), "architectures[0]",
      fmt::format("the architecture \"{}\" is not supported (attn reads {})", *architecture, kSupportedArchitectures));
}

// GPT2Config: n_embd, n_head, n_layer, n_positions, n_inner (null: 4 n_embd),
// activation_function "gelu_new", layer_norm_epsilon 1e-5, tied head.
void read_gpt2(const ConfigFields& f, HfConfig& c) {
  c.vocab_size = f.size("vocab_size", 0, kMaxVocab);
  c.hidden_size = f.size("n_embd", 0, kMaxWidth);
  c.num_layers = f.size("n_layer");
  c.num_heads = f.size("n_head", 0, kMaxWidth);
  if (c.hidden_size % c.num_heads != 0)
    f.fail("n_head", fmt::format("expected a divisor of n_embd = {}, found {}", c.hidden_size, c.num_heads));
  c.num_kv_heads = c.num_heads;
  c.head_dim = c.hidden_size / c.num_heads;
  c.intermediate_size = f.size("n_inner", 4 * c.hidden_size, 64 * kMaxWidth);
  c.max_positions = f.size("n_positions", 0, kMaxVocab);
  c.norm_eps = f.positive_number("layer_norm_epsilon", 1e-5);
  c.activation = f.string("activation_function", "gelu_new");
  if (c.activation != "gelu_new" && c.activation != "gelu_pytorch_tanh" && c.activation != "gelu" &&
      c.activation != "relu")
    f.fail("activation_function", fmt::format("\"{}\" is not supported (attn computes gelu_new, gelu_pytorch_tanh, "
                                              "gelu and relu)",
                                              c.activation));
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", true);
  // Switches of GPT2Attention that change what it computes:
  if (!f.boolean("scale_attn_weights", true))
    f.fail("scale_attn_weights", "false is not supported: attn scales the scores by 1/sqrt(d)");
  if (f.boolean("scale_attn_by_inverse_layer_idx", false))
    f.fail("scale_attn_by_inverse_layer_idx", "true is not supported: attn scales every layer's scores by 1/sqrt(d)");
  if (f.boolean("add_cross_attention", false))
    f.fail("add_cross_attention", "true is not supported: attn reads decoder-only GPT-2");
  // reorder_and_upcast_attn only changes float16 rounding: in float64 it computes the same.
}

// The rope_scaling object (or v5's rope_parameters): null, "default", or "llama3".
void read_rope_scaling(const ConfigFields& f, HfConfig& c) {
  const char* key = f.get("rope_parameters") ? "rope_parameters" : "rope_scaling";
  const Json* scaling = f.get(key);
  if (!scaling) return;
  if (!scaling->is_object())
    f.fail(key, fmt::format("expected null or an object, found {}", describe_config_value(*scaling)));
  const ConfigFields s(*scaling, f.file(), f.path(key));
  const std::string type = s.get("rope_type") ? s.string("rope_type", "") : s.string("type", "default");
  if (s.get("rope_theta")) c.rope_theta = s.positive_number("rope_theta", std::nullopt);
  if (type == "default") return;
  if (type != "llama3")
    s.fail("rope_type", fmt::format("\"{}\" is not supported (attn computes RoPE as written, or with rope_type "
                                    "\"llama3\")",
                                    type));
  c.rope_llama3 = true;
  c.llama3.factor = s.positive_number("factor", std::nullopt);
  c.llama3.low_freq_factor = s.positive_number("low_freq_factor", std::nullopt);
  c.llama3.high_freq_factor = s.positive_number("high_freq_factor", std::nullopt);
  if (c.llama3.high_freq_factor <= c.llama3.low_freq_factor)
    s.fail("high_freq_factor", fmt::format("expected more than low_freq_factor = {}, found {}",
                                           c.llama3.low_freq_factor, c.llama3.high_freq_factor));
  c.llama3.original_max_position_embeddings = s.size("original_max_position_embeddings", 0, kMaxVocab);
}

// MistralConfig's sliding_window defaults to 4096: only an explicit null means none.
void check_no_sliding_window(const ConfigFields& f) {
  if (f.get("sliding_window"))
    f.fail("sliding_window",
           "a sliding window is not supported: attn reads Mistral checkpoints whose sliding_window "
           "is null");
  if (!f.has("sliding_window"))
    f.fail("sliding_window",
           "missing: MistralConfig's default is a window of 4096, which attn does not compute; "
           "attn reads Mistral checkpoints whose sliding_window is null");
}

// LlamaConfig and its relatives: hidden_size, intermediate_size, num_hidden_layers,
// num_attention_heads, num_key_value_heads (default: the heads), head_dim (default
// hidden_size / heads; Qwen3Config's is 128), rms_norm_eps, rope_theta, hidden_act "silu".
void read_llama(const ConfigFields& f, HfConfig& c) {
  c.vocab_size = f.size("vocab_size", 0, kMaxVocab);
  c.hidden_size = f.size("hidden_size", 0, kMaxWidth);
  c.intermediate_size = f.size("intermediate_size", 0, 64 * kMaxWidth);
  c.num_layers = f.size("num_hidden_layers");
  c.num_heads = f.size("num_attention_heads", 0, kMaxWidth);
  c.num_kv_heads = f.size("num_key_value_heads", c.num_heads, kMaxWidth);
  if (c.num_heads % c.num_kv_heads != 0)
    f.fail("num_key_value_heads",
           fmt::format("expected a divisor of num_attention_heads = {}, found {}", c.num_heads, c.num_kv_heads));
  if (!f.get("head_dim") && c.family != HfFamily::Qwen3 && c.hidden_size % c.num_heads != 0)
    f.fail("num_attention_heads",
           fmt::format("expected a divisor of hidden_size = {}, found {}", c.hidden_size, c.num_heads));
  c.head_dim = f.size("head_dim", c.family == HfFamily::Qwen3 ? 128 : c.hidden_size / c.num_heads, kMaxWidth);
  if (c.head_dim % 2 != 0)
    f.fail("head_dim", fmt::format("expected an even size (RoPE turns pairs), found {}", c.head_dim));
  c.max_positions = f.size("max_position_embeddings", c.family == HfFamily::Llama ? 2048 : 32768, std::size_t{1} << 31);
  c.norm_eps = f.positive_number("rms_norm_eps", 1e-6);
  c.activation = f.string("hidden_act", "silu");
  if (c.activation != "silu")
    f.fail("hidden_act", fmt::format("\"{}\" is not supported (attn's SwiGLU gates with silu)", c.activation));
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", false);
  c.rope_theta = f.positive_number("rope_theta", 10000.0);
  read_rope_scaling(f, c);
  if (c.family == HfFamily::Qwen2)
    c.qkv_bias = true;
  else
    c.attention_bias = f.boolean("attention_bias", false);
  if (c.family == HfFamily::Llama && f.boolean("mlp_bias", false))
    f.fail("mlp_bias", "true is not supported: attn's SwiGLU has no biases");
  if (c.architecture == "MistralForCausalLM") check_no_sliding_window(f);
  if (c.family != HfFamily::Llama && f.boolean("use_sliding_window", false))
    f.fail("use_sliding_window", "true is not supported: attn reads Qwen checkpoints without a sliding window");
}

}  // namespace

HfConfig read_hf_config(const std::string& folder) {
  HfConfig c;
  c.file = folder + "/config.json";
  refuse_other_than_file(c.file, "the model's configuration as a JSON file");
  if (!is_regular_file(c.file))
    throw InputError(folder, "", "found no config.json: expected a Hugging Face model folder");
  const Json json = read_json_object_file(c.file);
  const ConfigFields fields(json, c.file);
  c.family = family_of(fields, &c.architecture);
  if (c.family == HfFamily::Gpt2)
    read_gpt2(fields, c);
  else
    read_llama(fields, c);
  c.eos_token_ids = fields.ids("eos_token_id", c.vocab_size);
  const std::string generation = folder + "/generation_config.json";
  refuse_other_than_file(generation, "the generation settings as a JSON file");
  if (is_regular_file(generation)) {
    const Json g = read_json_object_file(generation);
    const ConfigFields gfields(g, generation);
    if (gfields.get("eos_token_id")) c.eos_token_ids = gfields.ids("eos_token_id", c.vocab_size);
  }
  return c;
}

}  // namespace attn
