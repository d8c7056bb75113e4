// The Llama family (transformers' models/llama/modeling_llama.py, and Mistral's, Qwen2's
// and Qwen3's, which differ from it in their weights and configuration only): token
// embeddings, pre-norm blocks of RMSNorm, causal self-attention with RoPE on the queries and
// keys (grouped-query: G key/value heads; Qwen3 RMS-normalizes each query and key head
// first) and the SwiGLU MLP, the final RMSNorm, the head.
#include <optional>

#include <fmt/format.h>

#include "arch/family.h"
#include "forward/layers.h"
#include "forward/program.h"

namespace attn {

namespace {

// The members, by the class config.json names: what tells them apart.
bool is_qwen2(const std::string& c) { return c == "Qwen2ForCausalLM"; }
bool is_qwen3(const std::string& c) { return c == "Qwen3ForCausalLM"; }
bool is_llama(const std::string& c) { return c == "LlamaForCausalLM" || c == "MistralForCausalLM"; }

// The rope_scaling object (or v5's rope_parameters): null, "default", or "llama3".
void read_rope_scaling(const ConfigFields& f, ModelConfig& m) {
  const char* key = f.get("rope_parameters") ? "rope_parameters" : "rope_scaling";
  const Json* scaling = f.get(key);
  if (!scaling) return;
  if (!scaling->is_object())
    f.fail(key, fmt::format("expected null or an object, found {}", describe_config_value(*scaling)));
  const ConfigFields s(*scaling, f.file(), f.path(key));
  const std::string type = s.get("rope_type") ? s.string("rope_type", "") : s.string("type", "default");
  if (s.get("rope_theta")) m.rope_theta = s.positive_number("rope_theta", std::nullopt);
  if (type == "default") return;
  if (type != "llama3")
    s.fail("rope_type", fmt::format("\"{}\" is not supported (attn computes RoPE as written, or with rope_type "
                                    "\"llama3\")",
                                    type));
  // Llama 3.1/3.2: the frequency step before RoPE turns the pairs
  RopeScaling& r = m.rope_scaling;
  r.llama3 = true;
  r.factor = s.positive_number("factor", std::nullopt);
  r.low_freq_factor = s.positive_number("low_freq_factor", std::nullopt);
  r.high_freq_factor = s.positive_number("high_freq_factor", std::nullopt);
  if (r.high_freq_factor <= r.low_freq_factor)
    s.fail("high_freq_factor",
           fmt::format("expected more than low_freq_factor = {}, found {}", r.low_freq_factor, r.high_freq_factor));
  r.original_max_position_embeddings = static_cast<double>(s.size("original_max_position_embeddings", 0, kMaxVocab));
}

// Mistral's window W (MistralConfig's sliding_window: 4096 when absent, none when null):
// query i sees keys i-W+1 .. i, as masking_utils' sliding_window_overlay says (kv_idx >
// q_idx - sliding_window, on top of the causal kv_idx <= q_idx), in every layer.
std::size_t mistral_window(const ConfigFields& f) {
  if (!f.has("sliding_window")) return 4096;
  return f.get("sliding_window") ? f.size("sliding_window", 0, std::size_t{1} << 31) : 0;
}

// What config.json says about the biases: Qwen2 has them on q, k and v; Llama and Qwen3 on
// q, k, v and o with attention_bias.
bool qkv_bias(const ConfigFields& f, const std::string& hf_class) {
  return is_qwen2(hf_class) || f.boolean("attention_bias", false);
}
bool output_bias(const ConfigFields& f, const std::string& hf_class) {
  return !is_qwen2(hf_class) && f.boolean("attention_bias", false);
}

// The checks of the fields that change what is computed, which attn does not compute.
void check_unsupported(const ConfigFields& f, const std::string& hf_class) {
  if (!is_qwen2(hf_class)) (void)f.boolean("attention_bias", false);  // read now: a mistyped one is refused here
  if (is_llama(hf_class) && f.boolean("mlp_bias", false))
    f.fail("mlp_bias", "true is not supported: attn's SwiGLU has no biases");
  if (!is_llama(hf_class) && f.boolean("use_sliding_window", false))
    f.fail("use_sliding_window", "true is not supported: attn reads Qwen checkpoints without a sliding window");
}

// LlamaConfig and its relatives: hidden_size, intermediate_size, num_hidden_layers,
// num_attention_heads, num_key_value_heads (default: the heads), head_dim (default
// hidden_size / heads; Qwen3Config's is 128), rms_norm_eps, rope_theta, hidden_act "silu".
// Decoder-only and pre-norm, with RMSNorm, RoPE and SwiGLU.
CheckpointConfig llama_config(const ConfigFields& f, const std::string& hf_class) {
  CheckpointConfig c;
  ModelConfig& m = c.model;
  c.vocab_size = f.size("vocab_size", 0, kMaxVocab);
  m.d_model = f.size("hidden_size", 0, kMaxWidth);
  m.d_ff = f.size("intermediate_size", 0, 64 * kMaxWidth);
  c.num_layers = f.size("num_hidden_layers");
  m.num_heads = f.size("num_attention_heads", 0, kMaxWidth);
  m.num_kv_heads = f.size("num_key_value_heads", m.num_heads, kMaxWidth);
  if (m.num_heads % m.num_kv_heads != 0)
    f.fail("num_key_value_heads",
           fmt::format("expected a divisor of num_attention_heads = {}, found {}", m.num_heads, m.num_kv_heads));
  if (!f.get("head_dim") && !is_qwen3(hf_class) && m.d_model % m.num_heads != 0)
    f.fail("num_attention_heads",
           fmt::format("expected a divisor of hidden_size = {}, found {}", m.d_model, m.num_heads));
  m.d_head = f.size("head_dim", is_qwen3(hf_class) ? 128 : m.d_model / m.num_heads, kMaxWidth);
  if (m.d_head % 2 != 0)
    f.fail("head_dim", fmt::format("expected an even size (RoPE turns pairs), found {}", m.d_head));
  c.max_positions = f.size("max_position_embeddings", is_llama(hf_class) ? 2048 : 32768, std::size_t{1} << 31);
  m.layer_norm_eps = f.positive_number("rms_norm_eps", 1e-6);
  const std::string activation = f.string("hidden_act", "silu");
  if (activation != "silu")
    f.fail("hidden_act", fmt::format("\"{}\" is not supported (attn's SwiGLU gates with silu)", activation));
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", false);
  m.rope_theta = f.positive_number("rope_theta", 10000.0);
  read_rope_scaling(f, m);
  check_unsupported(f, hf_class);
  if (hf_class == "MistralForCausalLM") m.sliding_window = mistral_window(f);
  m.causal = true;
  m.norm_first = true;
  m.norm = Norm::RMSNorm;
  m.activation = Activation::SwiGLU;
  m.positional_encoding = PositionalEncoding::RoPE;
  m.qk_norm = is_qwen3(hf_class);  // q_norm and k_norm: RMSNorm over each head's d features
  m.num_layers = m.num_decoder_layers = c.num_layers;
  m.architecture = Architecture::DecoderOnly;
  m.architecture_given = true;
  return c;
}

// modeling_llama.py's weights (and Qwen2's, Qwen3's): nn.Linear weights stored (out, in),
// read transposed; RMSNorm weights; SwiGLU's gate (W_1), up (W_3), down (W_2); Qwen3's
// q_norm and k_norm, (head_dim,) each.
void llama_weights(const CheckpointConfig& c, const CheckpointFiles&, Model& model, WeightPlanner& p) {
  const ConfigFields f = c.fields();
  const ModelConfig& m = c.model;
  const std::size_t N = m.d_model, F = m.d_ff, V = c.vocab_size;
  const std::size_t Hd = m.num_heads * m.d_head, Gd = m.kv_heads() * m.d_head;
  model.decoder.resize(c.num_layers);
  model.output.present = true;
  model.output.tied = c.tie_word_embeddings;
  const std::string& hf_class = c.hf_class;
  p.add(model.embedding, "embedding", "model.embed_tokens.weight", {V, N}, "vocab_size x hidden_size", {"V", "N"});
  for (std::size_t i = 0; i < c.num_layers; ++i) {
    const std::string s = fmt::format("model.layers.{}.", i), at = fmt::format("decoder.{}.", i);
    auto& l = model.decoder[i];
    auto& a = l.self_attention;
    const auto linear = [&](Tensor& t, const std::string& name, const std::string& proj, std::size_t out,
                            std::size_t in, const char* words, AxisNames axes) {
      p.add(t, at + name, s + proj + ".weight", {out, in}, words, std::move(axes), StoredLayout::Transposed);
    };
    linear(a.W_q, "self_attention.W_q", "self_attn.q_proj", Hd, N, "heads·head_dim x hidden_size", {"N", "H*d"});
    linear(a.W_k, "self_attention.W_k", "self_attn.k_proj", Gd, N, "kv_heads·head_dim x hidden_size", {"N", "G*d"});
    linear(a.W_v, "self_attention.W_v", "self_attn.v_proj", Gd, N, "kv_heads·head_dim x hidden_size", {"N", "G*d"});
    linear(a.W_o, "self_attention.W_o", "self_attn.o_proj", N, Hd, "hidden_size x heads·head_dim", {"H*d", "N"});
    if (qkv_bias(f, hf_class)) {
      p.add(a.b_q, at + "self_attention.b_q", s + "self_attn.q_proj.bias", {Hd}, "heads·head_dim", {"H*d"});
      p.add(a.b_k, at + "self_attention.b_k", s + "self_attn.k_proj.bias", {Gd}, "kv_heads·head_dim", {"G*d"});
      p.add(a.b_v, at + "self_attention.b_v", s + "self_attn.v_proj.bias", {Gd}, "kv_heads·head_dim", {"G*d"});
    }
    if (m.qk_norm) {
      const std::size_t d = m.d_head;
      p.add(a.q_norm, at + "self_attention.q_norm", s + "self_attn.q_norm.weight", {d}, "head_dim", {"d"});
      p.add(a.k_norm, at + "self_attention.k_norm", s + "self_attn.k_norm.weight", {d}, "head_dim", {"d"});
    }
    if (output_bias(f, hf_class))
      p.add(a.b_o, at + "self_attention.b_o", s + "self_attn.o_proj.bias", {N}, "hidden_size", {"N"});
    p.add(l.norm1.gamma, at + "norm1.gamma", s + "input_layernorm.weight", {N}, "hidden_size", {"N"});
    linear(l.ffn.W_1, "ffn.W_1", "mlp.gate_proj", F, N, "intermediate_size x hidden_size", {"N", "F"});
    linear(l.ffn.W_2, "ffn.W_2", "mlp.down_proj", N, F, "hidden_size x intermediate_size", {"F", "N"});
    linear(l.ffn.W_3, "ffn.W_3", "mlp.up_proj", F, N, "intermediate_size x hidden_size", {"N", "F"});
    p.add(l.norm2.gamma, at + "norm2.gamma", s + "post_attention_layernorm.weight", {N}, "hidden_size", {"N"});
  }
  p.add(model.decoder_norm.gamma, "decoder_norm.gamma", "model.norm.weight", {N}, "hidden_size", {"N"});
  if (!c.tie_word_embeddings)
    p.add(model.output.W, "output.W", "lm_head.weight", {V, N}, "vocab_size x hidden_size", {"N", "V"},
          StoredLayout::Transposed);
}

// What a Llama, Mistral or Qwen checkpoint may hold that its architecture does not use:
// RoPE's inverse frequencies, a buffer older transformers saved in every layer, which attn
// computes from rope_theta (docs/real-models.md); a tied head's stored copy, lm_head.weight.
KnownTensors llama_known(const CheckpointConfig& c, const CheckpointFiles&) {
  KnownTensors known;
  known.layers = c.num_layers;
  known.unused = {"model.layers.{L}.self_attn.rotary_emb.inv_freq"};
  known.layer_prefix = "model.layers.{L}.";
  known.layers_field = "num_hidden_layers";
  if (c.tie_word_embeddings) known.unused.push_back("lm_head.weight");
  return known;
}

// LlamaForCausalLM.forward, over the prompt or one cached new token alike.
Tensor llama_forward(const Model& model, Program& run) {
  // hidden = embed_tokens(input_ids): (B,S,N); the positions turn q and k in each attention
  Traced x = run.input(Sequence::Source);
  run.rope_frequencies();                                               // Llama 3.1's rope_scaling
  const std::optional<Traced> mask = run.self_mask(x, Stack::Decoder);  // causal
  for (std::size_t l = 0; l < model.decoder.size(); ++l) {
    // LlamaDecoderLayer: x = x + self_attn(input_layernorm(x)); x = x + mlp(post_attention_layernorm(x))
    x = decoder_only_layer(x, model.decoder[l], mask ? &*mask : nullptr, model.config,
                           run.layer(Sequence::Source, Stack::Decoder, static_cast<int>(l)));
    run.layer_done(x, Stack::Decoder);
  }
  x = run.final_norm(x, model.decoder_norm, Sequence::Source, Stack::Decoder);  // norm
  return run.head(x, Sequence::Source);                                         // lm_head
}

}  // namespace

Family llama_family() {
  return {"llama",      {"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM"},
          llama_config, llama_weights,
          llama_known,  llama_forward};
}

}  // namespace attn
