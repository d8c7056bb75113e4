// GPT-2 (transformers' models/gpt2/modeling_gpt2.py, GPT2LMHeadModel): token embeddings
// plus learned positions, pre-norm blocks of causal self-attention (c_attn's q, k and v with
// their biases, scores scaled by 1/√d) and the MLP (GELU's tanh form), the final ln_f, and
// the head tied to the token embeddings.
#include <optional>

#include <fmt/format.h>

#include "arch/family.h"
#include "forward/layers.h"
#include "forward/program.h"

namespace attn {

namespace {

// GPT2Config: n_embd, n_head, n_layer, n_positions, n_inner (null: 4 n_embd),
// activation_function "gelu_new", layer_norm_epsilon 1e-5, tied head. Decoder-only and
// pre-norm, with learned positions, as attn's model file can say.
CheckpointConfig gpt2_config(const ConfigFields& f, const std::string&) {
  CheckpointConfig c;
  ModelConfig& m = c.model;
  c.vocab_size = f.size("vocab_size", 0, kMaxVocab);
  m.d_model = f.size("n_embd", 0, kMaxWidth);
  c.num_layers = f.size("n_layer");
  c.layers_field = "n_layer";
  m.num_heads = f.size("n_head", 0, kMaxWidth);
  if (m.d_model % m.num_heads != 0)
    f.fail("n_head", fmt::format("expected a divisor of n_embd = {}, found {}", m.d_model, m.num_heads));
  m.num_kv_heads = m.num_heads;
  m.d_head = m.d_model / m.num_heads;
  m.d_ff = f.size("n_inner", 4 * m.d_model, 64 * kMaxWidth);
  c.max_positions = f.size("n_positions", 0, kMaxVocab);
  m.layer_norm_eps = f.positive_number("layer_norm_epsilon", 1e-5);
  const std::string activation = f.string("activation_function", "gelu_new");
  if (activation != "gelu_new" && activation != "gelu_pytorch_tanh" && activation != "gelu" && activation != "relu")
    f.fail("activation_function", fmt::format("\"{}\" is not supported (attn computes gelu_new, gelu_pytorch_tanh, "
                                              "gelu and relu)",
                                              activation));
  m.activation = activation == "gelu"   ? Activation::GELU
                 : activation == "relu" ? Activation::ReLU
                                        : Activation::GELUTanh;
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", true);
  // Switches of GPT2Attention that change what it computes:
  if (!f.boolean("scale_attn_weights", true))
    f.fail("scale_attn_weights", "false is not supported: attn scales the scores by 1/sqrt(d)");
  if (f.boolean("scale_attn_by_inverse_layer_idx", false))
    f.fail("scale_attn_by_inverse_layer_idx", "true is not supported: attn scales every layer's scores by 1/sqrt(d)");
  if (f.boolean("add_cross_attention", false))
    f.fail("add_cross_attention", "true is not supported: attn reads decoder-only GPT-2");
  // reorder_and_upcast_attn only changes float16 rounding: in float64 it computes the same.
  m.causal = true;
  m.norm_first = true;
  m.norm = Norm::LayerNorm;
  m.positional_encoding = PositionalEncoding::Learned;
  m.max_len = c.max_positions;
  m.num_layers = m.num_decoder_layers = c.num_layers;
  m.architecture = Architecture::DecoderOnly;
  m.architecture_given = true;
  return c;
}

// modeling_gpt2.py's weights: Conv1D weights are stored (in, out), as attn uses them;
// c_attn's (N, 3N) holds W_q, W_k, W_v side by side and its bias b_q, b_k, b_v.
void gpt2_weights(const CheckpointConfig& c, const CheckpointFiles& files, Model& model, WeightPlanner& p) {
  const std::size_t N = c.model.d_model, F = c.model.d_ff, V = c.vocab_size;
  model.decoder.resize(c.num_layers);
  model.output.present = true;
  model.output.tied = c.tie_word_embeddings;
  // save_pretrained writes "transformer.wte.weight"; the original gpt2 files "wte.weight".
  const std::string t = files.find("transformer.wte.weight").tensor ? "transformer." : "";
  p.add(model.embedding, "embedding", t + "wte.weight", {V, N}, "vocab_size x n_embd", {"V", "N"});
  p.add(model.positions, "positions", t + "wpe.weight", {c.max_positions, N}, "n_positions x n_embd", {"S", "N"});
  for (std::size_t i = 0; i < c.num_layers; ++i) {
    const std::string h = fmt::format("{}h.{}.", t, i), at = fmt::format("decoder.{}.", i);
    auto& l = model.decoder[i];
    auto& a = l.self_attention;
    const char* qkv_names[] = {"W_q", "W_k", "W_v"};
    const char* bias_names[] = {"b_q", "b_k", "b_v"};
    Tensor* qkv[] = {&a.W_q, &a.W_k, &a.W_v};
    Tensor* bias[] = {&a.b_q, &a.b_k, &a.b_v};
    for (std::size_t k = 0; k < 3; ++k) {
      p.add(*qkv[k], at + "self_attention." + qkv_names[k], h + "attn.c_attn.weight", {N, 3 * N}, "n_embd x 3 n_embd",
            {"N", "H*d"}, StoredLayout::Columns, k * N, (k + 1) * N);
      p.add(*bias[k], at + "self_attention." + bias_names[k], h + "attn.c_attn.bias", {3 * N}, "3 n_embd", {"H*d"},
            StoredLayout::Range, k * N, (k + 1) * N);
    }
    p.add(a.W_o, at + "self_attention.W_o", h + "attn.c_proj.weight", {N, N}, "n_embd x n_embd", {"H*d", "N"});
    p.add(a.b_o, at + "self_attention.b_o", h + "attn.c_proj.bias", {N}, "n_embd", {"N"});
    p.add(l.norm1.gamma, at + "norm1.gamma", h + "ln_1.weight", {N}, "n_embd", {"N"});
    p.add(l.norm1.beta, at + "norm1.beta", h + "ln_1.bias", {N}, "n_embd", {"N"});
    p.add(l.ffn.W_1, at + "ffn.W_1", h + "mlp.c_fc.weight", {N, F}, "n_embd x n_inner", {"N", "F"});
    p.add(l.ffn.b_1, at + "ffn.b_1", h + "mlp.c_fc.bias", {F}, "n_inner", {"F"});
    p.add(l.ffn.W_2, at + "ffn.W_2", h + "mlp.c_proj.weight", {F, N}, "n_inner x n_embd", {"F", "N"});
    p.add(l.ffn.b_2, at + "ffn.b_2", h + "mlp.c_proj.bias", {N}, "n_embd", {"N"});
    p.add(l.norm2.gamma, at + "norm2.gamma", h + "ln_2.weight", {N}, "n_embd", {"N"});
    p.add(l.norm2.beta, at + "norm2.beta", h + "ln_2.bias", {N}, "n_embd", {"N"});
    // h.N.attn.bias and attn.masked_bias, the old causal-mask buffers, are not weights (gpt2_known).
  }
  p.add(model.decoder_norm.gamma, "decoder_norm.gamma", t + "ln_f.weight", {N}, "n_embd", {"N"});
  p.add(model.decoder_norm.beta, "decoder_norm.beta", t + "ln_f.bias", {N}, "n_embd", {"N"});
  if (!c.tie_word_embeddings)
    p.add(model.output.W, "output.W", "lm_head.weight", {V, N}, "vocab_size x n_embd", {"N", "V"},
          StoredLayout::Transposed);
}

// What a GPT-2 checkpoint may hold that GPT2LMHeadModel does not use ("{L}": a layer's
// number; after the "transformer." prefix when the keys have it): the causal-mask buffers
// older transformers saved, h.N.attn.bias (the lower-triangular mask) and
// h.N.attn.masked_bias (-1e4), which attn's causal mask replaces (docs/real-models.md); a
// tied head's stored copy, lm_head.weight (the head is the embedding).
KnownTensors gpt2_known(const CheckpointConfig& c, const CheckpointFiles& files) {
  const std::string t = files.find("transformer.wte.weight").tensor ? "transformer." : "";
  KnownTensors known;
  known.layers = c.num_layers;
  known.unused = {t + "h.{L}.attn.bias", t + "h.{L}.attn.masked_bias"};
  known.layer_prefix = t + "h.{L}.";
  known.layers_field = "n_layer";
  if (c.tie_word_embeddings) known.unused.push_back("lm_head.weight");
  return known;
}

// GPT2LMHeadModel.forward, over the prompt or one cached new token alike.
Tensor gpt2_forward(const Model& model, Program& run) {
  // hidden = wte(input_ids) + wpe(position_ids): (B,S,N)
  Traced x = run.input(Sequence::Source);
  const std::optional<Traced> mask = run.self_mask(x, Stack::Decoder);  // causal
  for (std::size_t l = 0; l < model.decoder.size(); ++l) {
    // GPT2Block: x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))
    x = decoder_only_layer(x, model.decoder[l], mask ? &*mask : nullptr, model.config,
                           run.layer(Sequence::Source, Stack::Decoder, static_cast<int>(l)));
    run.layer_done(x, Stack::Decoder);
  }
  x = run.final_norm(x, model.decoder_norm, Sequence::Source, Stack::Decoder);  // ln_f
  return run.head(x, Sequence::Source);                                         // lm_head, tied to wte
}

}  // namespace

Family gpt2_family() { return {"gpt2", {"GPT2LMHeadModel"}, gpt2_config, gpt2_weights, gpt2_known, gpt2_forward}; }

}  // namespace attn
