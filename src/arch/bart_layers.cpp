// BART's layers, which Marian's copy (arch/bart_layers.h): the configuration both classes
// read alike, and the tensors of their encoder and decoder layers and of their head.
#include "arch/bart_layers.h"

#include <fmt/format.h>

namespace attn {

namespace {

// ACT2FN's names for what attn computes: "gelu" (GELU's erf form), "relu", "swish" and
// "silu" (SiLU), "gelu_new" and "gelu_pytorch_tanh" (the tanh form).
Activation read_activation(const ConfigFields& f) {
  const std::string name = f.string("activation_function", "gelu");
  if (name == "gelu") return Activation::GELU;
  if (name == "relu") return Activation::ReLU;
  if (name == "swish" || name == "silu") return Activation::SiLU;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::GELUTanh;
  f.fail("activation_function", fmt::format("\"{}\" is not supported (attn computes gelu, relu, swish, silu, "
                                            "gelu_new and gelu_pytorch_tanh)",
                                            name));
}

// One token id in [0, V), `fallback` when the field is absent or null.
std::size_t one_id(const ConfigFields& f, const std::string& key, std::size_t fallback, std::size_t V) {
  const std::vector<std::size_t> ids = f.ids(key, V);
  if (ids.empty()) {
    if (fallback >= V)
      f.fail(key, fmt::format("missing: the default {} is past the vocabulary's {} rows", fallback, V));
    return fallback;
  }
  if (ids.size() != 1 || (f.get(key) && f.get(key)->is_array()))
    f.fail(key, fmt::format("expected one token id, found {}", describe_config_value(*f.get(key))));
  return ids[0];
}

// bad_words_ids: lists of token ids generation never writes; attn's generation reads those
// of one token (Marian's [[pad]]).
std::vector<std::size_t> read_bad_words(const ConfigFields& f, std::size_t V) {
  const Json* v = f.get("bad_words_ids");
  if (!v) return {};
  std::vector<std::size_t> out;
  if (!v->is_array())
    f.fail("bad_words_ids", "expected a list of lists of token ids, found " + describe_config_value(*v));
  for (const Json& words : *v) {
    if (!words.is_array() || words.size() != 1 || !words[0].is_number_unsigned() || words[0].get<std::uint64_t>() >= V)
      f.fail("bad_words_ids", fmt::format("expected lists of one token id from 0 to {} (attn forbids single tokens), "
                                          "found {}",
                                          V - 1, describe_config_value(words)));
    out.push_back(static_cast<std::size_t>(words[0].get<std::uint64_t>()));
  }
  return out;
}

// The sizes of both stacks: heads and widths of the encoder's and the decoder's.
void read_sizes(const ConfigFields& f, CheckpointConfig& c) {
  ModelConfig& m = c.model;
  m.d_model = f.size("d_model", 1024, kMaxWidth);
  c.num_encoder_layers = f.size("encoder_layers", 12);
  c.num_layers = f.size("decoder_layers", 12);
  c.layers_field = "encoder_layers";
  m.num_heads = f.size("encoder_attention_heads", 16, kMaxWidth);
  if (m.d_model % m.num_heads != 0)
    f.fail("encoder_attention_heads",
           fmt::format("expected a divisor of d_model = {}, found {}", m.d_model, m.num_heads));
  const std::size_t decoder_heads = f.size("decoder_attention_heads", 16, kMaxWidth);
  if (m.d_model % decoder_heads != 0)
    f.fail("decoder_attention_heads",
           fmt::format("expected a divisor of d_model = {}, found {}", m.d_model, decoder_heads));
  m.decoder_num_heads = decoder_heads;  // the decoder's blocks run ModelConfig::decoder_config()
  m.num_kv_heads = m.num_heads;
  m.d_head = m.d_model / m.num_heads;  // MarianAttention's head_dim = embed_dim // num_heads
  m.d_ff = f.size("encoder_ffn_dim", 4096, 64 * kMaxWidth);
  c.decoder_d_ff = f.size("decoder_ffn_dim", 4096, 64 * kMaxWidth);
  c.max_positions = f.size("max_position_embeddings", 1024, kMaxVocab);
}

}  // namespace

CheckpointConfig read_seq2seq_config(const ConfigFields& f, const Seq2SeqDefaults& defaults) {
  CheckpointConfig c;
  ModelConfig& m = c.model;
  c.vocab_size = f.size("vocab_size", defaults.vocab_size, kMaxVocab);
  const std::size_t V = c.vocab_size;
  // MarianConfig's own: a target vocabulary of its own, or embeddings not shared
  if (f.size("decoder_vocab_size", V, kMaxVocab) != V)
    f.fail("decoder_vocab_size", fmt::format("expected vocab_size = {} (attn reads one shared vocabulary)", V));
  if (!f.boolean("share_encoder_decoder_embeddings", true))
    f.fail("share_encoder_decoder_embeddings", "false is not supported: attn reads one shared embedding table");
  if (!f.boolean("is_encoder_decoder", true))
    f.fail("is_encoder_decoder", "false is not supported: attn reads the encoder-decoder");
  if (f.boolean("tie_encoder_decoder", false))
    f.fail("tie_encoder_decoder", "true is not supported: attn reads an encoder and a decoder of their own weights");
  read_sizes(f, c);
  m.activation = read_activation(f);
  m.scale_embeddings = f.boolean("scale_embedding", false);
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", true);
  (void)one_id(f, "pad_token_id", defaults.pad_token_id, V);  // read now: a mistyped one is refused here
  c.decoder_start_id = one_id(f, "decoder_start_token_id", defaults.decoder_start_id, V);
  c.never_generated = read_bad_words(f, V);
  // (dropout, layerdrop, init_std and the old normalize_before, add_final_layer_norm,
  // static_position_embeddings ... fields change nothing transformers computes at inference)
  m.norm_first = false;  // post-norm: LN(x + f(x))
  m.norm = Norm::LayerNorm;
  m.layer_norm_eps = 1e-5;  // nn.LayerNorm's default
  m.scores_times_inverse_root = true;
  m.causal = false;
  m.max_len = c.max_positions;
  m.num_layers = c.num_encoder_layers;
  m.num_decoder_layers = c.num_layers;
  m.architecture = Architecture::EncoderDecoder;
  m.architecture_given = true;
  return c;
}

std::string shared_embedding_name(const CheckpointFiles& files) {
  for (const char* name :
       {"model.shared.weight", "model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"})
    if (files.find(name).tensor) return name;
  return "model.shared.weight";  // missing: refused by name when the plan is checked
}

namespace {

// One attention block: q_proj, k_proj, v_proj, out_proj, each (N, N) with its bias.
void map_attention(AttentionWeights& a, const std::string& at, const std::string& s, std::size_t N, WeightPlanner& p) {
  const struct {
    Tensor* weight;
    Tensor* bias;
    const char *name, *proj;
    AxisNames axes;
  } rows[] = {{&a.W_q, &a.b_q, "q", "q_proj", {"N", "H*d"}},
              {&a.W_k, &a.b_k, "k", "k_proj", {"N", "H*d"}},
              {&a.W_v, &a.b_v, "v", "v_proj", {"N", "H*d"}},
              {&a.W_o, &a.b_o, "o", "out_proj", {"H*d", "N"}}};
  for (const auto& r : rows) {
    p.add(*r.weight, fmt::format("{}W_{}", at, r.name), s + r.proj + ".weight", {N, N}, "d_model x d_model", r.axes,
          StoredLayout::Transposed);
    p.add(*r.bias, fmt::format("{}b_{}", at, r.name), s + r.proj + ".bias", {N}, "d_model", {r.axes[1]});
  }
}

void map_norm(NormWeights& n, const std::string& at, const std::string& s, std::size_t N, WeightPlanner& p) {
  p.add(n.gamma, at + ".gamma", s + ".weight", {N}, "d_model", {"N"});
  p.add(n.beta, at + ".beta", s + ".bias", {N}, "d_model", {"N"});
}

// fc1 (F, N) and fc2 (N, F) with their biases.
void map_ffn(FeedForwardWeights& w, const std::string& at, const std::string& s, std::size_t N, std::size_t F,
             const char* width, WeightPlanner& p) {
  p.add(w.W_1, at + "ffn.W_1", s + "fc1.weight", {F, N}, fmt::format("{} x d_model", width), {"N", "F"},
        StoredLayout::Transposed);
  p.add(w.b_1, at + "ffn.b_1", s + "fc1.bias", {F}, width, {"F"});
  p.add(w.W_2, at + "ffn.W_2", s + "fc2.weight", {N, F}, fmt::format("d_model x {}", width), {"F", "N"},
        StoredLayout::Transposed);
  p.add(w.b_2, at + "ffn.b_2", s + "fc2.bias", {N}, "d_model", {"N"});
}

}  // namespace

void map_seq2seq_layers(const CheckpointConfig& c, const CheckpointFiles& files, Model& model, WeightPlanner& p) {
  const std::size_t N = c.model.d_model, V = c.vocab_size;
  model.encoder.resize(c.num_encoder_layers);
  model.decoder.resize(c.num_layers);
  for (std::size_t i = 0; i < model.encoder.size(); ++i) {
    const std::string s = fmt::format("model.encoder.layers.{}.", i), at = fmt::format("encoder.{}.", i);
    EncoderLayerWeights& l = model.encoder[i];
    l.full = true;
    map_attention(l.attention, at + "attention.", s + "self_attn.", N, p);
    map_norm(l.norm1, at + "norm1", s + "self_attn_layer_norm", N, p);
    map_ffn(l.ffn, at, s, N, c.model.d_ff, "encoder_ffn_dim", p);
    map_norm(l.norm2, at + "norm2", s + "final_layer_norm", N, p);
  }
  for (std::size_t i = 0; i < model.decoder.size(); ++i) {
    const std::string s = fmt::format("model.decoder.layers.{}.", i), at = fmt::format("decoder.{}.", i);
    DecoderLayerWeights& l = model.decoder[i];
    map_attention(l.self_attention, at + "self_attention.", s + "self_attn.", N, p);
    map_norm(l.norm1, at + "norm1", s + "self_attn_layer_norm", N, p);
    map_attention(l.cross_attention, at + "cross_attention.", s + "encoder_attn.", N, p);
    map_norm(l.norm2, at + "norm2", s + "encoder_attn_layer_norm", N, p);
    map_ffn(l.ffn, at, s, N, c.decoder_d_ff, "decoder_ffn_dim", p);
    map_norm(l.norm3, at + "norm3", s + "final_layer_norm", N, p);
  }
  // lm_logits = lm_head(x) + final_logits_bias, lm_head tied to the shared embeddings
  model.output.present = true;
  model.output.tied = c.tie_word_embeddings;
  if (!c.tie_word_embeddings)
    p.add(model.output.W, "output.W", "lm_head.weight", {V, N}, "vocab_size x d_model", {"N", "V"},
          StoredLayout::Transposed);
  if (files.find("final_logits_bias").tensor)
    p.add(model.output.b, "output.b", "final_logits_bias", {1, V}, "1 x vocab_size", {"V"}, StoredLayout::Range, 0, V);
}

KnownTensors seq2seq_known(const CheckpointConfig& c) {
  KnownTensors known;
  known.layers = c.num_layers;
  known.unused = {"model.encoder.embed_tokens.weight", "model.decoder.embed_tokens.weight"};
  known.layer_prefix = "model.decoder.layers.{L}.";
  known.layers_field = "decoder_layers";
  if (c.tie_word_embeddings) known.unused.push_back("lm_head.weight");
  return known;
}

}  // namespace attn
