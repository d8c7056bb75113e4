// Phi (transformers' models/phi/modeling_phi.py, PhiForCausalLM: phi-1, phi-1.5, phi-2):
// token embeddings; each layer one LayerNorm whose output both attention and the MLP read,
// side by side, their outputs added to the layer's input, attn + mlp + x (a parallel
// residual); q, k, v and the output projection dense with biases, RoPE on the first
// partial_rotary_factor of each head's numbers (partial rotary), the MLP fc1, GELU's tanh
// form, fc2; final_layernorm; an untied head with a bias.
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "arch/family.h"
#include "forward/layers.h"
#include "forward/program.h"

namespace attn {

namespace {

// The fields of PhiConfig attn does not compute, refused by name.
void check_unsupported(const ConfigFields& f) {
  if (f.boolean("qk_layernorm", false))
    f.fail("qk_layernorm", "true is not supported: attn reads Phi checkpoints without q_layernorm and k_layernorm");
  const char* key = f.get("rope_parameters") ? "rope_parameters" : "rope_scaling";
  if (const Json* scaling = f.get(key)) {
    const ConfigFields s(*scaling, f.file(), f.path(key));
    const std::string type = !scaling->is_object() ? std::string()
                             : s.get("rope_type")  ? s.string("rope_type", "")
                                                   : s.string("type", "default");
    if (type != "default")
      f.fail(key, fmt::format("expected null, found {}: attn computes Phi's RoPE unscaled",
                              describe_config_value(*scaling)));
  }
}

// PhiConfig: vocab_size 51200, hidden_size 2048, intermediate_size 8192, num_hidden_layers
// 24, num_attention_heads 32, num_key_value_heads (null: the heads), hidden_act "gelu_new",
// max_position_embeddings 2048, layer_norm_eps 1e-5, tie_word_embeddings false, rope_theta
// 10000, partial_rotary_factor 0.5, qk_layernorm false.
CheckpointConfig phi_config(const ConfigFields& f, const std::string&) {
  CheckpointConfig c;
  ModelConfig& m = c.model;
  c.vocab_size = f.size("vocab_size", 51200, kMaxVocab);
  m.d_model = f.size("hidden_size", 2048, kMaxWidth);
  m.d_ff = f.size("intermediate_size", 8192, 64 * kMaxWidth);
  c.num_layers = f.size("num_hidden_layers", 24);
  m.num_heads = f.size("num_attention_heads", 32, kMaxWidth);
  m.num_kv_heads = f.size("num_key_value_heads", m.num_heads, kMaxWidth);
  if (m.num_heads % m.num_kv_heads != 0)
    f.fail("num_key_value_heads",
           fmt::format("expected a divisor of num_attention_heads = {}, found {}", m.num_heads, m.num_kv_heads));
  if (!f.get("head_dim") && m.d_model % m.num_heads != 0)
    f.fail("num_attention_heads",
           fmt::format("expected a divisor of hidden_size = {}, found {}", m.d_model, m.num_heads));
  m.d_head = f.size("head_dim", m.d_model / m.num_heads, kMaxWidth);
  c.max_positions = f.size("max_position_embeddings", 2048, std::size_t{1} << 31);
  m.layer_norm_eps = f.positive_number("layer_norm_eps", 1e-5);
  const std::string activation = f.string("hidden_act", "gelu_new");
  if (activation != "gelu_new" && activation != "gelu_pytorch_tanh" && activation != "gelu")
    f.fail("hidden_act",
           fmt::format("\"{}\" is not supported (attn computes gelu_new, gelu_pytorch_tanh and gelu)", activation));
  m.activation = activation == "gelu" ? Activation::GELU : Activation::GELUTanh;
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", false);
  if (c.tie_word_embeddings)
    f.fail("tie_word_embeddings", "true is not supported: attn reads Phi's own head, lm_head with its bias");
  m.rope_theta = f.positive_number("rope_theta", 10000.0);
  check_unsupported(f);
  // rotary_ndims = int(head_dim * partial_rotary_factor), RoPE's own dim likewise
  const double factor = f.positive_number("partial_rotary_factor", 0.5);
  const auto r = static_cast<std::size_t>(std::floor(static_cast<double>(m.d_head) * factor));
  if (factor > 1 || r < 2 || r % 2 != 0)
    f.fail("partial_rotary_factor",
           fmt::format("expected a fraction of head_dim {} that turns an even number of its numbers (RoPE turns "
                       "pairs), found {}",
                       m.d_head, factor));
  m.rotary_dims = r == m.d_head ? 0 : r;
  m.parallel_residual = true;
  m.causal = true;
  m.norm_first = true;
  m.norm = Norm::LayerNorm;
  m.positional_encoding = PositionalEncoding::RoPE;
  m.num_layers = m.num_decoder_layers = c.num_layers;
  m.architecture = Architecture::DecoderOnly;
  m.architecture_given = true;
  return c;
}

// modeling_phi.py's weights: nn.Linear weights stored (out, in), read transposed, each with
// its bias; the layer's one LayerNorm input_layernorm (attn's norm1); the head lm_head with
// its bias.
void phi_weights(const CheckpointConfig& c, const CheckpointFiles&, Model& model, WeightPlanner& p) {
  const ModelConfig& m = c.model;
  const std::size_t N = m.d_model, F = m.d_ff, V = c.vocab_size;
  const std::size_t Hd = m.num_heads * m.d_head, Gd = m.kv_heads() * m.d_head;
  model.decoder.resize(c.num_layers);
  model.output.present = true;
  model.output.tied = c.tie_word_embeddings;
  p.add(model.embedding, "embedding", "model.embed_tokens.weight", {V, N}, "vocab_size x hidden_size", {"V", "N"});
  for (std::size_t i = 0; i < c.num_layers; ++i) {
    const std::string s = fmt::format("model.layers.{}.", i), at = fmt::format("decoder.{}.", i);
    auto& l = model.decoder[i];
    auto& a = l.self_attention;
    // nn.Linear `name` (out, in) and its bias (out,)
    const auto linear = [&](Tensor& w, Tensor& b, const std::string& weight, const std::string& bias,
                            const std::string& name, std::size_t out, std::size_t in, const char* words,
                            AxisNames axes) {
      const std::string out_axis = axes[1];
      p.add(w, at + weight, s + name + ".weight", {out, in}, words, std::move(axes), StoredLayout::Transposed);
      p.add(b, at + bias, s + name + ".bias", {out}, fmt::format("{}", out), {out_axis});
    };
    linear(a.W_q, a.b_q, "self_attention.W_q", "self_attention.b_q", "self_attn.q_proj", Hd, N,
           "heads·head_dim x hidden_size", {"N", "H*d"});
    linear(a.W_k, a.b_k, "self_attention.W_k", "self_attention.b_k", "self_attn.k_proj", Gd, N,
           "kv_heads·head_dim x hidden_size", {"N", Gd == Hd ? "H*d" : "G*d"});
    linear(a.W_v, a.b_v, "self_attention.W_v", "self_attention.b_v", "self_attn.v_proj", Gd, N,
           "kv_heads·head_dim x hidden_size", {"N", Gd == Hd ? "H*d" : "G*d"});
    linear(a.W_o, a.b_o, "self_attention.W_o", "self_attention.b_o", "self_attn.dense", N, Hd,
           "hidden_size x heads·head_dim", {"H*d", "N"});
    p.add(l.norm1.gamma, at + "norm1.gamma", s + "input_layernorm.weight", {N}, "hidden_size", {"N"});
    p.add(l.norm1.beta, at + "norm1.beta", s + "input_layernorm.bias", {N}, "hidden_size", {"N"});
    linear(l.ffn.W_1, l.ffn.b_1, "ffn.W_1", "ffn.b_1", "mlp.fc1", F, N, "intermediate_size x hidden_size", {"N", "F"});
    linear(l.ffn.W_2, l.ffn.b_2, "ffn.W_2", "ffn.b_2", "mlp.fc2", N, F, "hidden_size x intermediate_size", {"F", "N"});
  }
  p.add(model.decoder_norm.gamma, "decoder_norm.gamma", "model.final_layernorm.weight", {N}, "hidden_size", {"N"});
  p.add(model.decoder_norm.beta, "decoder_norm.beta", "model.final_layernorm.bias", {N}, "hidden_size", {"N"});
  p.add(model.output.W, "output.W", "lm_head.weight", {V, N}, "vocab_size x hidden_size", {"N", "V"},
        StoredLayout::Transposed);
  p.add(model.output.b, "output.b", "lm_head.bias", {V}, "vocab_size", {"V"});
}

// The tensors Phi's files may hold that attn does not read: a layer's
// self_attn.rotary_emb.inv_freq (RoPE's frequencies, which attn computes).
KnownTensors phi_known(const CheckpointConfig& c, const CheckpointFiles&) {
  KnownTensors known;
  known.layers = c.num_layers;
  known.unused = {"model.layers.{L}.self_attn.rotary_emb.inv_freq"};
  known.layer_prefix = "model.layers.{L}.";
  known.layers_field = "num_hidden_layers";
  return known;
}

// PhiDecoderLayer: h = input_layernorm(x); x = attn(h) + mlp(h) + x, the two sub-layers'
// outputs added first, as HF adds them. x is (B,S,N) -> (B,S,N).
Traced phi_layer(const Traced& x, const DecoderLayerWeights& layer, const Traced* mask, const ModelConfig& config,
                 const TraceScope& at) {
  const Traced h = layer_norm_step(x, layer.norm1, StepKind::PreNorm, 1, config, at);
  const Traced attention =
      multi_head_attention(h, h, layer.self_attention, mask, config, at.block(Block::MaskedSelfAttention));
  const Traced mlp = feed_forward(h, layer.ffn, config, at.block(Block::FeedForward));
  const Traced both = residual_step(attention, mlp, 1, at);
  return layer_output(residual_step(x, both, 2, at), at);
}

// PhiForCausalLM.forward, over the prompt or one cached new token alike.
Tensor phi_forward(const Model& model, Program& run) {
  // hidden = embed_tokens(input_ids): (B,S,N); RoPE turns part of q and k in each attention
  Traced x = run.input(Sequence::Source);
  const std::optional<Traced> mask = run.self_mask(x, Stack::Decoder);  // causal
  for (std::size_t l = 0; l < model.decoder.size(); ++l) {
    x = phi_layer(x, model.decoder[l], mask ? &*mask : nullptr, model.config,
                  run.layer(Sequence::Source, Stack::Decoder, static_cast<int>(l)));
    run.layer_done(x, Stack::Decoder);
  }
  x = run.final_norm(x, model.decoder_norm, Sequence::Source, Stack::Decoder);  // final_layernorm
  return run.head(x, Sequence::Source);                                         // lm_head, with its bias
}

}  // namespace

Family phi_family() { return {"phi", {"PhiForCausalLM"}, phi_config, phi_weights, phi_known, phi_forward}; }

}  // namespace attn
