// GPT-Neo (transformers' models/gpt_neo/modeling_gpt_neo.py, GPTNeoForCausalLM: the
// TinyStories models): GPT-2's layout (token embeddings plus learned positions, pre-norm
// LayerNorm blocks, the MLP with GELU's tanh form, ln_f, the head tied to the embeddings),
// with two differences in its attention: the scores are not scaled by 1/√d, and the layers
// alternate global (causal) and local attention (causal, the keys of the last window_size
// positions only), as config.json's attention_types lays them out.
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "arch/family.h"
#include "checkpoint/hf_config.h"
#include "forward/layers.h"
#include "forward/program.h"

namespace attn {

namespace {

// GPTNeoConfig.expand_attention_types_params: [[["global", "local"], 12]] is 12 times the
// pair, one name per layer; true where a layer is "local".
std::vector<bool> local_layers(const ConfigFields& f, std::size_t num_layers) {
  const char* key = "attention_types";
  static const Json kDefault = Json::parse(R"([[["global", "local"], 12]])");
  const Json& types = f.get(key) ? *f.get(key) : kDefault;
  const auto expected = [&](const std::string& what, const Json& found) {
    f.fail(key, fmt::format("expected {}, found {}", what, describe_config_value(found)));
  };
  if (!types.is_array()) expected("a list of [[names], count] pairs", types);
  std::vector<bool> local;
  for (const Json& item : types) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_array() || !item[1].is_number_integer() ||
        item[1].get<long long>() < 0 || item[1].get<long long>() > static_cast<long long>(kMaxWidth))
      expected("[[names], count] pairs, a count of 0 or more", item);
    for (long long k = 0; k < item[1].get<long long>(); ++k)
      for (const Json& name : item[0]) {
        if (!name.is_string() || (name.get<std::string>() != "global" && name.get<std::string>() != "local"))
          expected("\"global\" or \"local\" (attn computes those)", name);
        local.push_back(name.get<std::string>() == "local");
        if (local.size() > num_layers) break;
      }
  }
  if (local.size() != num_layers)
    f.fail(key,
           fmt::format("expected one attention type per layer (num_layers = {}), found {}", num_layers, local.size()));
  return local;
}

// GPTNeoConfig: hidden_size 2048, num_layers 24, num_heads 16, intermediate_size (null: 4
// hidden_size), max_position_embeddings 2048, attention_types, window_size 256,
// activation_function "gelu_new", layer_norm_epsilon 1e-5, tied head.
CheckpointConfig gpt_neo_config(const ConfigFields& f, const std::string&) {
  CheckpointConfig c;
  ModelConfig& m = c.model;
  c.vocab_size = f.size("vocab_size", 50257, kMaxVocab);
  m.d_model = f.size("hidden_size", 2048, kMaxWidth);
  c.num_layers = f.size("num_layers", 24);
  c.layers_field = "num_layers";
  m.num_heads = f.size("num_heads", 16, kMaxWidth);
  if (m.d_model % m.num_heads != 0)
    f.fail("num_heads", fmt::format("expected a divisor of hidden_size = {}, found {}", m.d_model, m.num_heads));
  m.num_kv_heads = m.num_heads;
  m.d_head = m.d_model / m.num_heads;
  m.d_ff = f.size("intermediate_size", 4 * m.d_model, 64 * kMaxWidth);
  c.max_positions = f.size("max_position_embeddings", 2048, kMaxVocab);
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
  // GPTNeoSelfAttention: q · kᵀ unscaled; a local layer's mask hides keys window_size back
  m.score_scale = ScoreScale::None;
  m.sliding_window = f.size("window_size", 256, std::size_t{1} << 31);
  m.windowed_layers = local_layers(f, c.num_layers);
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

// modeling_gpt_neo.py's weights: nn.Linear weights stored (out, in), read transposed; q, k
// and v without a bias, out_proj with one. Each layer's attn.attention.bias (the boolean
// causal or local mask) and attn.attention.masked_bias are buffers, not weights: unread.
void gpt_neo_weights(const CheckpointConfig& c, const CheckpointFiles& files, Model& model, WeightPlanner& p) {
  const std::size_t N = c.model.d_model, F = c.model.d_ff, V = c.vocab_size;
  model.decoder.resize(c.num_layers);
  model.output.present = true;
  model.output.tied = c.tie_word_embeddings;
  const std::string t = files.find("transformer.wte.weight").tensor ? "transformer." : "";
  p.add(model.embedding, "embedding", t + "wte.weight", {V, N}, "vocab_size x hidden_size", {"V", "N"});
  p.add(model.positions, "positions", t + "wpe.weight", {c.max_positions, N}, "max_position_embeddings x hidden_size",
        {"S", "N"});
  for (std::size_t i = 0; i < c.num_layers; ++i) {
    const std::string h = fmt::format("{}h.{}.", t, i), at = fmt::format("decoder.{}.", i);
    auto& l = model.decoder[i];
    auto& a = l.self_attention;
    const auto linear = [&](Tensor& w, const std::string& name, const std::string& tensor, std::size_t out,
                            std::size_t in, const char* words, AxisNames axes) {
      p.add(w, at + name, h + tensor, {out, in}, words, std::move(axes), StoredLayout::Transposed);
    };
    linear(a.W_q, "self_attention.W_q", "attn.attention.q_proj.weight", N, N, "hidden_size x hidden_size",
           {"N", "H*d"});
    linear(a.W_k, "self_attention.W_k", "attn.attention.k_proj.weight", N, N, "hidden_size x hidden_size",
           {"N", "H*d"});
    linear(a.W_v, "self_attention.W_v", "attn.attention.v_proj.weight", N, N, "hidden_size x hidden_size",
           {"N", "H*d"});
    linear(a.W_o, "self_attention.W_o", "attn.attention.out_proj.weight", N, N, "hidden_size x hidden_size",
           {"H*d", "N"});
    p.add(a.b_o, at + "self_attention.b_o", h + "attn.attention.out_proj.bias", {N}, "hidden_size", {"N"});
    p.add(l.norm1.gamma, at + "norm1.gamma", h + "ln_1.weight", {N}, "hidden_size", {"N"});
    p.add(l.norm1.beta, at + "norm1.beta", h + "ln_1.bias", {N}, "hidden_size", {"N"});
    linear(l.ffn.W_1, "ffn.W_1", "mlp.c_fc.weight", F, N, "intermediate_size x hidden_size", {"N", "F"});
    p.add(l.ffn.b_1, at + "ffn.b_1", h + "mlp.c_fc.bias", {F}, "intermediate_size", {"F"});
    linear(l.ffn.W_2, "ffn.W_2", "mlp.c_proj.weight", N, F, "hidden_size x intermediate_size", {"F", "N"});
    p.add(l.ffn.b_2, at + "ffn.b_2", h + "mlp.c_proj.bias", {N}, "hidden_size", {"N"});
    p.add(l.norm2.gamma, at + "norm2.gamma", h + "ln_2.weight", {N}, "hidden_size", {"N"});
    p.add(l.norm2.beta, at + "norm2.beta", h + "ln_2.bias", {N}, "hidden_size", {"N"});
  }
  p.add(model.decoder_norm.gamma, "decoder_norm.gamma", t + "ln_f.weight", {N}, "hidden_size", {"N"});
  p.add(model.decoder_norm.beta, "decoder_norm.beta", t + "ln_f.bias", {N}, "hidden_size", {"N"});
  if (!c.tie_word_embeddings)
    p.add(model.output.W, "output.W", "lm_head.weight", {V, N}, "vocab_size x hidden_size", {"N", "V"},
          StoredLayout::Transposed);
}

// The tensors GPT-Neo's files may hold that attn does not read (each {L} a layer's number,
// after the "transformer." prefix when the keys have it): each layer's attention buffers,
// attn.attention.bias (the boolean causal or local mask, which the masks replace) and
// attn.attention.masked_bias; a tied head's stored copy, lm_head.weight.
KnownTensors gpt_neo_known(const CheckpointConfig& c, const CheckpointFiles& files) {
  const std::string t = files.find("transformer.wte.weight").tensor ? "transformer." : "";
  KnownTensors known;
  known.layers = c.num_layers;
  known.unused = {t + "h.{L}.attn.attention.bias", t + "h.{L}.attn.attention.masked_bias"};
  known.layer_prefix = t + "h.{L}.";
  known.layers_field = "num_layers";
  if (c.tie_word_embeddings) known.unused.push_back("lm_head.weight");
  return known;
}

// GPTNeoForCausalLM.forward, over the prompt or one cached new token alike.
Tensor gpt_neo_forward(const Model& model, Program& run) {
  // hidden = wte(input_ids) + wpe(position_ids): (B,S,N)
  const ModelConfig& config = model.config;
  Traced x = run.input(Sequence::Source);
  bool any_global = false, any_local = false;
  for (std::size_t l = 0; l < model.decoder.size(); ++l)
    (config.window_of(static_cast<int>(l)) ? any_local : any_global) = true;
  // the global layers' causal mask and the local layers' windowed one, each made once
  const std::optional<Traced> global = any_global ? run.self_mask(x, Stack::Decoder) : std::nullopt;
  const std::optional<Traced> local = any_local ? run.window_mask(x, Stack::Decoder) : std::nullopt;
  for (std::size_t l = 0; l < model.decoder.size(); ++l) {
    const std::optional<Traced>& mask = config.window_of(static_cast<int>(l)) ? local : global;
    // GPTNeoBlock: x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))
    x = decoder_only_layer(x, model.decoder[l], mask ? &*mask : nullptr, config,
                           run.layer(Sequence::Source, Stack::Decoder, static_cast<int>(l)));
    run.layer_done(x, Stack::Decoder);
  }
  x = run.final_norm(x, model.decoder_norm, Sequence::Source, Stack::Decoder);  // ln_f
  return run.head(x, Sequence::Source);                                         // lm_head, tied to wte
}

}  // namespace

Family gpt_neo_family() {
  return {"gpt_neo", {"GPTNeoForCausalLM"}, gpt_neo_config, gpt_neo_weights, gpt_neo_known, gpt_neo_forward};
}

}  // namespace attn
