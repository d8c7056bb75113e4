#include "model/config_section.h"

#include <fmt/format.h>

#include "model/load_context.h"

namespace attn {

namespace {

// The model section's keys: the block flags of attn/block_weights.def (qk_norm) come after
// "architecture".
std::vector<std::string> model_keys() {
  std::vector<std::string> keys = {
      "d_model", "num_heads",  "d_head",       "d_ff",           "num_layers",          "num_decoder_layers", "causal",
      "seed",    "activation", "norm_first",   "layer_norm_eps", "positional_encoding", "scale_embeddings",   "max_len",
      "norm",    "rope_theta", "num_kv_heads", "sliding_window", "architecture"};
#define ATTN_BLOCK_FLAG(name, comment) keys.push_back(#name);
#include "attn/block_weights.def"
#undef ATTN_BLOCK_FLAG
  keys.push_back("rope_scaling");
  return keys;
}

const std::vector<std::string> kModelKeys = model_keys();

// d_model, num_heads and d_head: the sizes every tensor's shape is checked against.
void read_attention_sizes(const JsonReader& reader, const Json& value, const std::string& path, ModelConfig& config) {
  const Json& d_model = reader.required(value, path, "d_model");
  const Json& num_heads = reader.required(value, path, "num_heads");
  if (reader.is_missing(d_model) || reader.is_missing(num_heads))
    throw AlreadyReported{};  // collect mode: recorded as missing
  config.d_model = reader.positive_integer(d_model, json_child(path, "d_model"), kMaxDimension);
  config.num_heads = reader.positive_integer(num_heads, json_child(path, "num_heads"), kMaxDimension);
  if (const Json* d_head = reader.member(value, "d_head")) {
    config.d_head = reader.positive_integer(*d_head, json_child(path, "d_head"), kMaxDimension);
    return;
  }
  if (config.d_model % config.num_heads != 0)
    reader.fail(json_child(path, "num_heads"),
                fmt::format("expected a divisor of d_model = {} (d_head defaults to d_model / num_heads), "
                            "found {}; set d_head or change num_heads",
                            config.d_model, config.num_heads));
  config.d_head = config.d_model / config.num_heads;
}

void read_seed(const JsonReader& reader, const Json& value, const std::string& path, ModelConfig& config) {
  const Json* seed = reader.member(value, "seed");
  if (!seed) return;
  const std::int64_t s = reader.integer(*seed, json_child(path, "seed"));
  if (s < 0 || s > 0xFFFFFFFFLL)
    reader.fail(json_child(path, "seed"),
                fmt::format("expected an integer from 0 to 4294967295 (as NumPy), found {}", s));
  config.seed = static_cast<std::uint32_t>(s);
}

// The choices that shape the layers: activation, norm placement and epsilon, positions.
void read_layer_choices(const JsonReader& reader, const Json& value, const std::string& path, ModelConfig& config) {
  if (const Json* v = reader.member(value, "activation")) {
    const std::string kind =
        reader.choice(*v, json_child(path, "activation"), {"relu", "gelu", "gelu_tanh", "swiglu", "silu"});
    config.activation = kind == "gelu"        ? Activation::GELU
                        : kind == "gelu_tanh" ? Activation::GELUTanh
                        : kind == "swiglu"    ? Activation::SwiGLU
                        : kind == "silu"      ? Activation::SiLU
                                              : Activation::ReLU;
  }
  if (const Json* v = reader.member(value, "norm_first"))
    config.norm_first = reader.boolean(*v, json_child(path, "norm_first"));
  if (const Json* v = reader.member(value, "norm"))
    config.norm = reader.choice(*v, json_child(path, "norm"), {"layernorm", "rmsnorm"}) == "rmsnorm" ? Norm::RMSNorm
                                                                                                     : Norm::LayerNorm;
  if (const Json* v = reader.member(value, "layer_norm_eps")) {
    config.layer_norm_eps = reader.finite_number(*v, json_child(path, "layer_norm_eps"));
    if (config.layer_norm_eps < 0)
      reader.fail(json_child(path, "layer_norm_eps"), fmt::format("expected a number >= 0, found {}", v->dump()));
  }
  if (const Json* v = reader.member(value, "positional_encoding")) {
    const std::string kind =
        reader.choice(*v, json_child(path, "positional_encoding"), {"sinusoidal", "learned", "none", "rope"});
    config.positional_encoding = kind == "learned" ? PositionalEncoding::Learned
                                 : kind == "none"  ? PositionalEncoding::None
                                 : kind == "rope"  ? PositionalEncoding::RoPE
                                                   : PositionalEncoding::Sinusoidal;
  }
  if (const Json* v = reader.member(value, "scale_embeddings"))
    config.scale_embeddings = reader.boolean(*v, json_child(path, "scale_embeddings"));
}

// model.rope_scaling: Llama 3.1's adjustment of RoPE's frequencies, written as config.json's
// {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4,
// "original_max_position_embeddings": 8192}; no other rope_type.
void read_rope_scaling(const JsonReader& reader, const Json& value, const std::string& path, ModelConfig& config) {
  reader.object(value, path,
                {"rope_type", "factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"});
  reader.choice(reader.required(value, path, "rope_type"), json_child(path, "rope_type"), {"llama3"});
  RopeScaling& s = config.rope_scaling;
  s.llama3 = true;
  const auto positive = [&](const char* key, double& target) {
    target = reader.finite_number(reader.required(value, path, key), json_child(path, key));
    if (!(target > 0)) reader.fail(json_child(path, key), fmt::format("expected a number > 0, found {}", target));
  };
  positive("factor", s.factor);
  positive("low_freq_factor", s.low_freq_factor);
  positive("high_freq_factor", s.high_freq_factor);
  positive("original_max_position_embeddings", s.original_max_position_embeddings);
  if (!(s.high_freq_factor > s.low_freq_factor))
    reader.fail(json_child(path, "high_freq_factor"),
                fmt::format("expected a number above low_freq_factor = {} (the band between them is smoothed), "
                            "found {}",
                            s.low_freq_factor, s.high_freq_factor));
}

// The modern attention variants: RoPE's base, grouped-query attention, a sliding window.
void read_attention_variants(const JsonReader& reader, const Json& value, const std::string& path,
                             ModelConfig& config) {
  const bool rope = config.positional_encoding == PositionalEncoding::RoPE;
  if (const Json* v = reader.member(value, "rope_theta")) {
    if (!rope)
      reader.fail(json_child(path, "rope_theta"),
                  "only used with model.positional_encoding \"rope\"; remove it or set positional_encoding");
    config.rope_theta = reader.finite_number(*v, json_child(path, "rope_theta"));
    if (!(config.rope_theta > 0))
      reader.fail(json_child(path, "rope_theta"), fmt::format("expected a number > 0, found {}", v->dump()));
  }
  if (const Json* v = reader.member(value, "rope_scaling")) {
    if (!rope)
      reader.fail(json_child(path, "rope_scaling"),
                  "only used with model.positional_encoding \"rope\"; remove it or set positional_encoding");
    if (!v->is_null()) read_rope_scaling(reader, *v, json_child(path, "rope_scaling"), config);
  }
  if (rope && config.d_head % 2 != 0)
    reader.fail(json_child(path, "positional_encoding"),
                fmt::format("\"rope\" needs an even head size (it turns dimension i with i + d/2), found d_head = {}",
                            config.d_head));
  config.num_kv_heads = config.num_heads;
  if (const Json* v = reader.member(value, "num_kv_heads")) {
    config.num_kv_heads = reader.positive_integer(*v, json_child(path, "num_kv_heads"), kMaxDimension);
    if (config.num_heads % config.num_kv_heads != 0)
      reader.fail(json_child(path, "num_kv_heads"),
                  fmt::format("expected a divisor of num_heads = {} (query head h reads key/value head h // "
                              "(num_heads / num_kv_heads)), found {}",
                              config.num_heads, config.num_kv_heads));
  }
  if (const Json* v = reader.member(value, "sliding_window"))
    config.sliding_window = reader.positive_integer(*v, json_child(path, "sliding_window"), kMaxDimension);
#define ATTN_BLOCK_FLAG(name, comment) \
  if (const Json* v = reader.member(value, #name)) config.name = reader.boolean(*v, json_child(path, #name));
#include "attn/block_weights.def"  // the block flags: qk_norm
#undef ATTN_BLOCK_FLAG
}

// "encoder-decoder", "encoder" or "decoder-only"; absent, inferred from the layers the
// file gives (the loader sets it once it has seen whether there is a "decoder").
void read_architecture(const JsonReader& reader, const Json& value, const std::string& path, ModelConfig& config) {
  const Json* v = reader.member(value, "architecture");
  if (!v) return;
  const std::string kind =
      reader.choice(*v, json_child(path, "architecture"), {"encoder-decoder", "encoder", "decoder-only"});
  config.architecture = kind == "encoder-decoder" ? Architecture::EncoderDecoder
                        : kind == "encoder"       ? Architecture::Encoder
                                                  : Architecture::DecoderOnly;
  config.architecture_given = true;
  // A decoder-only model's self-attention is always causal: it predicts each next token.
  if (config.architecture == Architecture::DecoderOnly && reader.member(value, "causal") && !config.causal)
    reader.fail(json_child(path, "causal"),
                "expected true or nothing: a decoder-only model's self-attention is always causal, found false");
}

}  // namespace

ModelConfig read_config(const JsonReader& reader, const Json& value, const std::string& path) {
  reader.object(value, path, kModelKeys);
  ModelConfig config;
  read_attention_sizes(reader, value, path, config);
  const auto positive = [&](const char* key, std::size_t& target) {
    if (const Json* v = reader.member(value, key))
      target = reader.positive_integer(*v, json_child(path, key), kMaxDimension);
  };
  positive("d_ff", config.d_ff);
  positive("num_layers", config.num_layers);
  positive("num_decoder_layers", config.num_decoder_layers);
  positive("max_len", config.max_len);
  if (const Json* causal = reader.member(value, "causal"))
    config.causal = reader.boolean(*causal, json_child(path, "causal"));
  read_architecture(reader, value, path, config);
  read_seed(reader, value, path, config);
  read_layer_choices(reader, value, path, config);
  read_attention_variants(reader, value, path, config);
  if (config.positional_encoding == PositionalEncoding::Learned && config.max_len == 0)
    reader.fail(json_child(path, "max_len"), "missing: a learned position table needs max_len (its number of rows)");
  return config;
}

}  // namespace attn
