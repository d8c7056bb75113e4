// Gemma (transformers' models/gemma/modeling_gemma.py, GemmaForCausalLM): Llama's layout
// with its own steps. The token embeddings are multiplied by √hidden_size; every RMSNorm
// scales by 1 + its weight; the MLP is GeGLU, its gate through GELU's tanh form; the heads'
// size head_dim is its own (not hidden_size / heads), often with one key/value head
// (multi-query attention); the head is tied to the embeddings.
#include <optional>

#include <fmt/format.h>

#include "arch/family.h"
#include "forward/layers.h"
#include "forward/program.h"

namespace attn {

namespace {

// The MLP's activation. GemmaConfig's hidden_activation (default gelu_pytorch_tanh)
// overrides the legacy hidden_act, which the first Gemma files wrote as "gelu" though the
// model computes the tanh form (transformers PR 29402): attn reads hidden_activation, else
// hidden_act.
void check_activation(const ConfigFields& f) {
  const char* key = f.get("hidden_activation") ? "hidden_activation" : "hidden_act";
  const std::string activation = f.string(key, "gelu_pytorch_tanh");
  if (activation != "gelu_pytorch_tanh" && activation != "gelu_new")
    f.fail(key, fmt::format("\"{}\" is not supported (attn's GeGLU gates with GELU's tanh form, gelu_pytorch_tanh)",
                            activation));
}

// GemmaConfig: vocab_size 256000, hidden_size 3072, intermediate_size 24576,
// num_hidden_layers 28, num_attention_heads 16, num_key_value_heads 16, head_dim 256,
// max_position_embeddings 8192, rms_norm_eps 1e-6, rope_theta 10000, attention_bias false,
// tie_word_embeddings true.
CheckpointConfig gemma_config(const ConfigFields& f, const std::string&) {
  CheckpointConfig c;
  ModelConfig& m = c.model;
  c.vocab_size = f.size("vocab_size", 256000, kMaxVocab);
  m.d_model = f.size("hidden_size", 3072, kMaxWidth);
  m.d_ff = f.size("intermediate_size", 24576, 64 * kMaxWidth);
  c.num_layers = f.size("num_hidden_layers", 28);
  m.num_heads = f.size("num_attention_heads", 16, kMaxWidth);
  m.num_kv_heads = f.size("num_key_value_heads", 16, kMaxWidth);
  if (m.num_heads % m.num_kv_heads != 0)
    f.fail("num_key_value_heads",
           fmt::format("expected a divisor of num_attention_heads = {}, found {}", m.num_heads, m.num_kv_heads));
  m.d_head = f.size("head_dim", 256, kMaxWidth);
  if (m.d_head % 2 != 0)
    f.fail("head_dim", fmt::format("expected an even size (RoPE turns pairs), found {}", m.d_head));
  c.max_positions = f.size("max_position_embeddings", 8192, std::size_t{1} << 31);
  m.layer_norm_eps = f.positive_number("rms_norm_eps", 1e-6);
  check_activation(f);
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", true);
  m.rope_theta = f.positive_number("rope_theta", 10000.0);
  if (const Json* scaling = f.get("rope_scaling"))
    f.fail("rope_scaling", fmt::format("expected null, found {}: attn computes Gemma's RoPE unscaled",
                                       describe_config_value(*scaling)));
  (void)f.boolean("attention_bias", false);  // read now: a mistyped one is refused here
  m.scale_embeddings = true;                 // hidden_states * hidden_size**0.5
  m.causal = true;
  m.norm_first = true;
  m.norm = Norm::RMSNormPlusOne;
  m.activation = Activation::GeGLUTanh;
  m.positional_encoding = PositionalEncoding::RoPE;
  m.num_layers = m.num_decoder_layers = c.num_layers;
  m.architecture = Architecture::DecoderOnly;
  m.architecture_given = true;
  return c;
}

// modeling_gemma.py's weights, Llama's names: nn.Linear weights stored (out, in), read
// transposed; the RMSNorms' weights (the gain's distance from 1); GeGLU's gate (W_1), up
// (W_3), down (W_2).
void gemma_weights(const CheckpointConfig& c, const CheckpointFiles&, Model& model, WeightPlanner& p) {
  const ModelConfig& m = c.model;
  const std::size_t N = m.d_model, F = m.d_ff, V = c.vocab_size;
  const std::size_t Hd = m.num_heads * m.d_head, Gd = m.kv_heads() * m.d_head;
  const bool bias = c.fields().boolean("attention_bias", false);
  model.decoder.resize(c.num_layers);
  model.output.present = true;
  model.output.tied = c.tie_word_embeddings;
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
    if (bias) {
      p.add(a.b_q, at + "self_attention.b_q", s + "self_attn.q_proj.bias", {Hd}, "heads·head_dim", {"H*d"});
      p.add(a.b_k, at + "self_attention.b_k", s + "self_attn.k_proj.bias", {Gd}, "kv_heads·head_dim", {"G*d"});
      p.add(a.b_v, at + "self_attention.b_v", s + "self_attn.v_proj.bias", {Gd}, "kv_heads·head_dim", {"G*d"});
      p.add(a.b_o, at + "self_attention.b_o", s + "self_attn.o_proj.bias", {N}, "hidden_size", {"N"});
    }
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

// The tensors Gemma's files may hold that attn does not read: a layer's
// self_attn.rotary_emb.inv_freq (RoPE's frequencies, which attn computes); a tied head's
// stored copy, lm_head.weight.
KnownTensors gemma_known(const CheckpointConfig& c, const CheckpointFiles&) {
  KnownTensors known;
  known.layers = c.num_layers;
  known.unused = {"model.layers.{L}.self_attn.rotary_emb.inv_freq"};
  known.layer_prefix = "model.layers.{L}.";
  known.layers_field = "num_hidden_layers";
  if (c.tie_word_embeddings) known.unused.push_back("lm_head.weight");
  return known;
}

// GemmaForCausalLM.forward, over the prompt or one cached new token alike.
Tensor gemma_forward(const Model& model, Program& run) {
  // hidden = embed_tokens(input_ids) · √hidden_size: (B,S,N); RoPE turns q and k in each attention
  Traced x = run.input(Sequence::Source);
  const std::optional<Traced> mask = run.self_mask(x, Stack::Decoder);  // causal
  for (std::size_t l = 0; l < model.decoder.size(); ++l) {
    // GemmaDecoderLayer: x = x + self_attn(input_layernorm(x)); x = x + mlp(post_attention_layernorm(x))
    x = decoder_only_layer(x, model.decoder[l], mask ? &*mask : nullptr, model.config,
                           run.layer(Sequence::Source, Stack::Decoder, static_cast<int>(l)));
    run.layer_done(x, Stack::Decoder);
  }
  x = run.final_norm(x, model.decoder_norm, Sequence::Source, Stack::Decoder);  // norm
  return run.head(x, Sequence::Source);                                         // lm_head, tied
}

}  // namespace

Family gemma_family() {
  return {"gemma", {"GemmaForCausalLM"}, gemma_config, gemma_weights, gemma_known, gemma_forward};
}

}  // namespace attn
