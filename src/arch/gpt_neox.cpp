// GPT-NeoX (transformers' models/gpt_neox/modeling_gpt_neox.py, GPTNeoXForCausalLM: the
// Pythia suite): token embeddings (no positions added), pre-norm LayerNorm blocks whose
// attention takes q, k and v from one fused query_key_value laid out per head and turns the
// first rotary_pct of each head's numbers by RoPE (partial rotary), the MLP (GELU), the
// final LayerNorm, and an untied head, embed_out. With use_parallel_residual (the default)
// attention and the MLP both read the layer's input: x + (mlp(ln2(x)) + attn(ln1(x))).
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "arch/family.h"
#include "forward/layers.h"
#include "forward/program.h"

namespace attn {

namespace {

// The rope_scaling object: null (or "default") only.
void check_no_rope_scaling(const ConfigFields& f) {
  const char* key = f.get("rope_parameters") ? "rope_parameters" : "rope_scaling";
  const Json* scaling = f.get(key);
  if (!scaling) return;
  const ConfigFields s(*scaling, f.file(), f.path(key));
  const std::string type = !scaling->is_object() ? std::string()
                           : s.get("rope_type")  ? s.string("rope_type", "")
                                                 : s.string("type", "default");
  if (type != "default")
    f.fail(key, fmt::format("expected null, found {}: attn computes GPT-NeoX's RoPE unscaled",
                            describe_config_value(*scaling)));
}

// The head numbers RoPE turns: int(head_size * rotary_pct), as GPTNeoXAttention's
// rotary_ndims (and the rotary embedding's dim).
std::size_t rotary_dims(const ConfigFields& f, std::size_t d) {
  const char* key = f.get("partial_rotary_factor") ? "partial_rotary_factor" : "rotary_pct";
  const double pct = f.positive_number(key, 0.25);
  if (pct > 1) f.fail(key, fmt::format("expected a fraction of the head (at most 1), found {}", pct));
  const auto r = static_cast<std::size_t>(std::floor(static_cast<double>(d) * pct));
  if (r < 2 || r % 2 != 0)
    f.fail(key, fmt::format("expected a fraction of the head_size {} that turns an even number of its numbers (RoPE "
                            "turns pairs), found {} (int({} x {}) = {})",
                            d, pct, d, pct, r));
  return r;
}

// GPTNeoXConfig: hidden_size 6144, num_hidden_layers 44, num_attention_heads 64,
// intermediate_size 24576, hidden_act "gelu", rotary_pct 0.25, rotary_emb_base 10000,
// max_position_embeddings 2048, layer_norm_eps 1e-5, tie_word_embeddings false,
// use_parallel_residual true, attention_bias true.
CheckpointConfig gpt_neox_config(const ConfigFields& f, const std::string&) {
  CheckpointConfig c;
  ModelConfig& m = c.model;
  c.vocab_size = f.size("vocab_size", 50432, kMaxVocab);
  m.d_model = f.size("hidden_size", 6144, kMaxWidth);
  c.num_layers = f.size("num_hidden_layers", 44);
  m.num_heads = f.size("num_attention_heads", 64, kMaxWidth);
  if (m.d_model % m.num_heads != 0)
    f.fail("num_attention_heads",
           fmt::format("expected a divisor of hidden_size = {}, found {}", m.d_model, m.num_heads));
  m.num_kv_heads = m.num_heads;
  m.d_head = m.d_model / m.num_heads;
  m.d_ff = f.size("intermediate_size", 24576, 64 * kMaxWidth);
  c.max_positions = f.size("max_position_embeddings", 2048, std::size_t{1} << 31);
  m.layer_norm_eps = f.positive_number("layer_norm_eps", 1e-5);
  const std::string activation = f.string("hidden_act", "gelu");
  if (activation != "gelu" && activation != "gelu_new" && activation != "gelu_pytorch_tanh" && activation != "relu")
    f.fail("hidden_act", fmt::format("\"{}\" is not supported (attn computes gelu, gelu_new, gelu_pytorch_tanh and "
                                     "relu)",
                                     activation));
  m.activation = activation == "gelu"   ? Activation::GELU
                 : activation == "relu" ? Activation::ReLU
                                        : Activation::GELUTanh;
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", false);
  m.rope_theta = f.get("rope_theta") ? f.positive_number("rope_theta", std::nullopt)
                                     : f.positive_number("rotary_emb_base", 10000.0);
  check_no_rope_scaling(f);
  m.rotary_dims = rotary_dims(f, m.d_head);
  if (m.rotary_dims == m.d_head) m.rotary_dims = 0;  // all of the head: RoPE as Llama's
  m.parallel_residual = f.boolean("use_parallel_residual", true);
  (void)f.boolean("attention_bias", true);  // read now: a mistyped one is refused here
  m.causal = true;
  m.norm_first = true;
  m.norm = Norm::LayerNorm;
  m.positional_encoding = PositionalEncoding::RoPE;
  m.num_layers = m.num_decoder_layers = c.num_layers;
  m.architecture = Architecture::DecoderOnly;
  m.architecture_given = true;
  return c;
}

// modeling_gpt_neox.py's weights: nn.Linear weights stored (out, in), read transposed.
// query_key_value's (3N, N) output is viewed as (H, 3d): head h's query rows are h·3d ..
// h·3d + d, its key rows the next d, its value rows the d after (and so its bias). Each
// layer's attention.bias, attention.masked_bias and attention.rotary_emb.inv_freq are
// buffers, not weights: unread.
void gpt_neox_weights(const CheckpointConfig& c, const CheckpointFiles&, Model& model, WeightPlanner& p) {
  const ModelConfig& m = c.model;
  const std::size_t N = m.d_model, F = m.d_ff, V = c.vocab_size, H = m.num_heads, d = m.d_head;
  const bool bias = c.fields().boolean("attention_bias", true);
  model.decoder.resize(c.num_layers);
  model.output.present = true;
  model.output.tied = c.tie_word_embeddings;
  p.add(model.embedding, "embedding", "gpt_neox.embed_in.weight", {V, N}, "vocab_size x hidden_size", {"V", "N"});
  for (std::size_t i = 0; i < c.num_layers; ++i) {
    const std::string s = fmt::format("gpt_neox.layers.{}.", i), at = fmt::format("decoder.{}.", i);
    auto& l = model.decoder[i];
    auto& a = l.self_attention;
    const char* names[] = {"W_q", "W_k", "W_v"};
    const char* bias_names[] = {"b_q", "b_k", "b_v"};
    Tensor* qkv[] = {&a.W_q, &a.W_k, &a.W_v};
    Tensor* biases[] = {&a.b_q, &a.b_k, &a.b_v};
    for (std::size_t k = 0; k < 3; ++k) {
      p.add(*qkv[k], at + "self_attention." + names[k], s + "attention.query_key_value.weight", {3 * N, N},
            "3 hidden_size x hidden_size", {"N", "H*d"}, StoredLayout::HeadRows, k * d, (k + 1) * d, H);
      if (bias)
        p.add(*biases[k], at + "self_attention." + bias_names[k], s + "attention.query_key_value.bias", {3 * N},
              "3 hidden_size", {"H*d"}, StoredLayout::HeadRange, k * d, (k + 1) * d, H);
    }
    p.add(a.W_o, at + "self_attention.W_o", s + "attention.dense.weight", {N, N}, "hidden_size x hidden_size",
          {"H*d", "N"}, StoredLayout::Transposed);
    if (bias) p.add(a.b_o, at + "self_attention.b_o", s + "attention.dense.bias", {N}, "hidden_size", {"N"});
    p.add(l.norm1.gamma, at + "norm1.gamma", s + "input_layernorm.weight", {N}, "hidden_size", {"N"});
    p.add(l.norm1.beta, at + "norm1.beta", s + "input_layernorm.bias", {N}, "hidden_size", {"N"});
    p.add(l.norm2.gamma, at + "norm2.gamma", s + "post_attention_layernorm.weight", {N}, "hidden_size", {"N"});
    p.add(l.norm2.beta, at + "norm2.beta", s + "post_attention_layernorm.bias", {N}, "hidden_size", {"N"});
    p.add(l.ffn.W_1, at + "ffn.W_1", s + "mlp.dense_h_to_4h.weight", {F, N}, "intermediate_size x hidden_size",
          {"N", "F"}, StoredLayout::Transposed);
    p.add(l.ffn.b_1, at + "ffn.b_1", s + "mlp.dense_h_to_4h.bias", {F}, "intermediate_size", {"F"});
    p.add(l.ffn.W_2, at + "ffn.W_2", s + "mlp.dense_4h_to_h.weight", {N, F}, "hidden_size x intermediate_size",
          {"F", "N"}, StoredLayout::Transposed);
    p.add(l.ffn.b_2, at + "ffn.b_2", s + "mlp.dense_4h_to_h.bias", {N}, "hidden_size", {"N"});
  }
  p.add(model.decoder_norm.gamma, "decoder_norm.gamma", "gpt_neox.final_layer_norm.weight", {N}, "hidden_size", {"N"});
  p.add(model.decoder_norm.beta, "decoder_norm.beta", "gpt_neox.final_layer_norm.bias", {N}, "hidden_size", {"N"});
  if (!c.tie_word_embeddings)
    p.add(model.output.W, "output.W", "embed_out.weight", {V, N}, "vocab_size x hidden_size", {"N", "V"},
          StoredLayout::Transposed);
}

// The tensors GPT-NeoX's files may hold that attn does not read: each layer's attention
// buffers, attention.bias and attention.masked_bias (the causal mask's, which attn's
// replaces) and attention.rotary_emb.inv_freq (RoPE's frequencies, which attn computes); a
// tied head's stored copy, embed_out.weight.
KnownTensors gpt_neox_known(const CheckpointConfig& c, const CheckpointFiles&) {
  KnownTensors known;
  known.layers = c.num_layers;
  known.unused = {"gpt_neox.layers.{L}.attention.bias", "gpt_neox.layers.{L}.attention.masked_bias",
                  "gpt_neox.layers.{L}.attention.rotary_emb.inv_freq"};
  known.layer_prefix = "gpt_neox.layers.{L}.";
  known.layers_field = "num_hidden_layers";
  if (c.tie_word_embeddings) known.unused.push_back("embed_out.weight");
  return known;
}

// GPTNeoXLayer with use_parallel_residual: x + (mlp(post_attention_layernorm(x)) +
// attn(input_layernorm(x))), the two sub-layers' outputs added first, as HF adds them.
// x is (B,S,N) -> (B,S,N).
Traced parallel_layer(const Traced& x, const DecoderLayerWeights& layer, const Traced* mask, const ModelConfig& config,
                      const TraceScope& at) {
  const Traced h1 = layer_norm_step(x, layer.norm1, StepKind::PreNorm, 1, config, at);
  const Traced attention =
      multi_head_attention(h1, h1, layer.self_attention, mask, config, at.block(Block::MaskedSelfAttention));
  const Traced h2 = layer_norm_step(x, layer.norm2, StepKind::PreNorm, 2, config, at);
  const Traced mlp = feed_forward(h2, layer.ffn, config, at.block(Block::FeedForward));
  const Traced both = residual_step(attention, mlp, 1, at);  // mlp + attn: the same sum either way round
  return layer_output(residual_step(x, both, 2, at), at);
}

// GPTNeoXForCausalLM.forward, over the prompt or one cached new token alike.
Tensor gpt_neox_forward(const Model& model, Program& run) {
  // hidden = embed_in(input_ids): (B,S,N); the positions turn q and k in each attention
  Traced x = run.input(Sequence::Source);
  const std::optional<Traced> mask = run.self_mask(x, Stack::Decoder);  // causal
  for (std::size_t l = 0; l < model.decoder.size(); ++l) {
    const TraceScope at = run.layer(Sequence::Source, Stack::Decoder, static_cast<int>(l));
    const Traced* m = mask ? &*mask : nullptr;
    // sequential: x = x + attn(input_layernorm(x)); x = x + mlp(post_attention_layernorm(x))
    x = model.config.parallel_residual ? parallel_layer(x, model.decoder[l], m, model.config, at)
                                       : decoder_only_layer(x, model.decoder[l], m, model.config, at);
    run.layer_done(x, Stack::Decoder);
  }
  x = run.final_norm(x, model.decoder_norm, Sequence::Source, Stack::Decoder);  // final_layer_norm
  return run.head(x, Sequence::Source);                                         // embed_out
}

}  // namespace

Family gpt_neox_family() {
  return {"gpt_neox", {"GPTNeoXForCausalLM"}, gpt_neox_config, gpt_neox_weights, gpt_neox_known, gpt_neox_forward};
}

}  // namespace attn
