#include "model/hf_model.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "attn/error.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/hf_config.h"
#include "checkpoint/locate.h"
#include "model/byte_size.h"
#include "model/hf_weights.h"
#include "model/memory_estimate.h"

namespace attn {

namespace {

// What attn's model file would say for this checkpoint (docs/model-file.md).
ModelConfig model_config(const HfConfig& c) {
  ModelConfig m;
  m.d_model = c.hidden_size;
  m.num_heads = c.num_heads;
  m.num_kv_heads = c.num_kv_heads;
  m.d_head = c.head_dim;
  m.d_ff = c.intermediate_size;
  m.causal = true;
  m.norm_first = true;
  m.layer_norm_eps = c.norm_eps;
  m.num_layers = m.num_decoder_layers = c.num_layers;
  m.architecture = Architecture::DecoderOnly;
  m.architecture_given = true;
  if (c.family == HfFamily::Gpt2) {
    m.norm = Norm::LayerNorm;
    m.activation = c.activation == "gelu"   ? Activation::GELU
                   : c.activation == "relu" ? Activation::ReLU
                                            : Activation::GELUTanh;
    m.positional_encoding = PositionalEncoding::Learned;
    m.max_len = c.max_positions;
  } else {
    m.norm = Norm::RMSNorm;
    m.activation = Activation::SwiGLU;
    m.positional_encoding = PositionalEncoding::RoPE;
    m.rope_theta = c.rope_theta;
    // Qwen3's q_norm and k_norm: the QK-norm step, RMSNorm over each head's d features.
    m.qk_norm = c.family == HfFamily::Qwen3;
    // rope_scaling "llama3" (Llama 3.1/3.2): the frequency step before RoPE turns the pairs.
    if (c.rope_llama3) {
      m.rope_scaling.llama3 = true;
      m.rope_scaling.factor = c.llama3.factor;
      m.rope_scaling.low_freq_factor = c.llama3.low_freq_factor;
      m.rope_scaling.high_freq_factor = c.llama3.high_freq_factor;
      m.rope_scaling.original_max_position_embeddings = static_cast<double>(c.llama3.original_max_position_embeddings);
    }
  }
  return m;
}

// Whether the weight matrices stay in the mapped files: options.weights_as_stored, unless
// the run differentiates them (options.backward) or ATTN_WIDEN_WEIGHTS is set to anything
// but "" or "0" (docs/real-models.md: the tests compare every run both ways with it).
bool keeps_weights_stored(const LoadOptions& options) {
  const char* widen = std::getenv("ATTN_WIDEN_WEIGHTS");
  const bool forced = widen && *widen && std::string(widen) != "0";
  return options.weights_as_stored && !options.backward && !forced;
}

// How the estimate counts the weights and how the refusal says so: every number as
// float64; or some kept as stored, their numbers and the bytes they take in the files.
// Before the headers say which dtypes, `at_least` asks only for a quarter of the float64
// estimate: no stored number takes fewer than 2 bytes, and the numbers kept as stored are
// among those the float64 estimate counts at 8 (so a quarter is never more than the count
// the headers will give).
struct WeightBytes {
  std::uint64_t stored_numbers = 0;
  std::uint64_t stored_bytes = 0;
  bool at_least = false;
  std::string words = "as float64";
};

// The model's memory with its weights counted as `weights` says, from config.json:
// InputError at the number of layers when it is past the limit.
void check_memory(const HfConfig& c, const ModelConfig& m, const LoadOptions& options, const WeightBytes& weights) {
  RunSize size;
  size.encoder_layers = 0;
  size.decoder_layers = c.num_layers;
  size.target_len = 1;
  size.vocab = c.vocab_size;
  size.position_rows = m.max_len;
  size.trace_kept = options.trace_kept;
  size.stored_numbers = weights.stored_numbers;
  size.stored_bytes = weights.stored_bytes;
  std::uint64_t need = estimate_run_bytes(m, size);
  const long double head = c.tie_word_embeddings ? 0.0L : 8.0L * c.vocab_size * c.hidden_size;  // untied lm_head
  need = static_cast<long double>(need) + head >= 1.8e19L ? UINT64_MAX : need + static_cast<std::uint64_t>(head);
  if (weights.at_least) need /= 4;
  const std::uint64_t limit = memory_limit(options);
  if (need <= limit) return;
  throw InputError(c.file, c.family == HfFamily::Gpt2 ? "n_layer" : "num_hidden_layers",
                   fmt::format("this model's weights alone would need about {} {} (layers={}, d_model={}, d_ff={}, "
                               "vocab={}), more than the limit of {}; use a smaller model or raise --max-memory",
                               byte_size_text(static_cast<double>(need), ByteStyle::Memory), weights.words,
                               c.num_layers, c.hidden_size, c.intermediate_size, c.vocab_size,
                               byte_size_text(static_cast<double>(limit), ByteStyle::Memory)));
}

// Adds one planned read to `plan`.
struct Planner {
  std::vector<WeightRead>& plan;
  void add(Tensor& target, std::string parameter, std::string tensor, Shape stored, std::string words, AxisNames axes,
           StoredLayout layout = StoredLayout::AsStored, std::size_t begin = 0, std::size_t end = 0) {
    WeightRead w;
    w.target = &target;
    w.parameter = std::move(parameter);
    w.tensor = std::move(tensor);
    w.stored_shape = std::move(stored);
    w.shape_words = std::move(words);
    w.axes = std::move(axes);
    w.layout = layout;
    w.begin = begin;
    w.end = end;
    plan.push_back(std::move(w));
  }
};

// What a GPT-2 checkpoint may hold that GPT2LMHeadModel does not use ("{L}": a layer's
// number; after the "transformer." prefix when the keys have it): the causal-mask buffers
// older transformers saved, h.N.attn.bias (the lower-triangular mask) and
// h.N.attn.masked_bias (-1e4), which attn's causal mask replaces (docs/real-models.md).
const std::vector<std::string> kGpt2Unused = {"h.{L}.attn.bias", "h.{L}.attn.masked_bias"};
const char* const kGpt2Layer = "h.{L}.";

// GPT-2 (modeling_gpt2.py): Conv1D weights are stored (in, out), as attn uses them;
// c_attn's (N, 3N) holds W_q, W_k, W_v side by side and its bias b_q, b_k, b_v.
void plan_gpt2(const HfConfig& c, const CheckpointFiles& files, Model& model, Planner& p) {
  const std::size_t N = c.hidden_size, F = c.intermediate_size, V = c.vocab_size;
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
    // h.N.attn.bias and attn.masked_bias, the old causal-mask buffers, are not weights (kGpt2Unused).
  }
  p.add(model.decoder_norm.gamma, "decoder_norm.gamma", t + "ln_f.weight", {N}, "n_embd", {"N"});
  p.add(model.decoder_norm.beta, "decoder_norm.beta", t + "ln_f.bias", {N}, "n_embd", {"N"});
  if (!c.tie_word_embeddings)
    p.add(model.output.W, "output.W", "lm_head.weight", {V, N}, "vocab_size x n_embd", {"N", "V"},
          StoredLayout::Transposed);
}

// What a Llama, Mistral or Qwen checkpoint may hold that its architecture does not use:
// RoPE's inverse frequencies, a buffer older transformers saved in every layer, which attn
// computes from rope_theta (docs/real-models.md).
const std::vector<std::string> kLlamaUnused = {"model.layers.{L}.self_attn.rotary_emb.inv_freq"};
const char* const kLlamaLayer = "model.layers.{L}.";

// Llama, Mistral, Qwen2, Qwen3 (modeling_llama.py, modeling_qwen2.py, modeling_qwen3.py):
// nn.Linear weights stored (out, in), read transposed; RMSNorm weights; SwiGLU's gate (W_1),
// up (W_3), down (W_2); Qwen3's q_norm and k_norm, (head_dim,) each.
void plan_llama(const HfConfig& c, Model& model, Planner& p) {
  const std::size_t N = c.hidden_size, F = c.intermediate_size, V = c.vocab_size;
  const std::size_t Hd = c.num_heads * c.head_dim, Gd = c.num_kv_heads * c.head_dim;
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
    if (c.qkv_bias || c.attention_bias) {
      p.add(a.b_q, at + "self_attention.b_q", s + "self_attn.q_proj.bias", {Hd}, "heads·head_dim", {"H*d"});
      p.add(a.b_k, at + "self_attention.b_k", s + "self_attn.k_proj.bias", {Gd}, "kv_heads·head_dim", {"G*d"});
      p.add(a.b_v, at + "self_attention.b_v", s + "self_attn.v_proj.bias", {Gd}, "kv_heads·head_dim", {"G*d"});
    }
    if (c.family == HfFamily::Qwen3) {
      const std::size_t d = c.head_dim;
      p.add(a.q_norm, at + "self_attention.q_norm", s + "self_attn.q_norm.weight", {d}, "head_dim", {"d"});
      p.add(a.k_norm, at + "self_attention.k_norm", s + "self_attn.k_norm.weight", {d}, "head_dim", {"d"});
    }
    if (c.attention_bias)
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

// The tensors besides the plan's that a checkpoint of `c`'s family may hold. A tied head's
// stored copy, lm_head.weight, is one: the head is the embedding (tie_word_embeddings).
KnownTensors known_tensors(const HfConfig& c, const CheckpointFiles& files) {
  KnownTensors known;
  known.layers = c.num_layers;
  if (c.family == HfFamily::Gpt2) {
    const std::string t = files.find("transformer.wte.weight").tensor ? "transformer." : "";
    for (const auto& pattern : kGpt2Unused) known.unused.push_back(t + pattern);
    known.layer_prefix = t + kGpt2Layer;
    known.layers_field = "n_layer";
  } else {
    known.unused = kLlamaUnused;
    known.layer_prefix = kLlamaLayer;
    known.layers_field = "num_hidden_layers";
  }
  if (c.tie_word_embeddings) known.unused.push_back("lm_head.weight");
  return known;
}

}  // namespace

CheckpointModel load_hf_model(const std::string& source, const LoadOptions& options) {
  CheckpointModel result;
  result.folder = locate_model(source, HubEnvironment::from_process());
  const HfConfig c = read_hf_config(result.folder);
  Model& model = result.model;
  model.source = source;
  model.config = model_config(c);
  const bool stored = keeps_weights_stored(options);
  // from config.json alone, before any other file is opened: 10^9 layers or a vocabulary
  // of 2^24 rows are refused here, in no time
  WeightBytes before_headers;
  if (stored) {
    before_headers.at_least = true;
    before_headers.words = "or more (its matrices kept as stored, at least 2 bytes a number)";
  }
  check_memory(c, model.config, options, before_headers);

  // every header, no weight; kept open by the weights when they stay as stored
  const auto opened = std::make_shared<const CheckpointFiles>(result.folder);
  const CheckpointFiles& files = *opened;
  model.decoder.resize(c.num_layers);
  model.output.present = true;
  model.output.tied = c.tie_word_embeddings;
  std::vector<WeightRead> plan;
  Planner planner{plan};
  if (c.family == HfFamily::Gpt2)
    plan_gpt2(c, files, model, planner);
  else
    plan_llama(c, model, planner);
  plan_check(plan, files, c.architecture);  // every tensor found, float, of its shape
  // and every tensor of the files read, or known to the architecture as unused
  check_every_tensor_used(plan, files, known_tensors(c, files), c.architecture);
  // the matrices at their dtypes' bytes, as the headers give them, before any is read
  if (stored) {
    const StoredSize kept = stored_size(plan);
    check_memory(c, model.config, options,
                 {kept.numbers, kept.bytes, false, fmt::format("with its matrices as stored ({})", kept.dtypes)});
  }
  plan_read(plan, result.checkpoint_names, stored ? opened : nullptr);

  result.architecture = c.architecture;
  result.vocab_size = c.vocab_size;
  result.max_positions = c.max_positions;
  result.eos_token_ids = c.eos_token_ids;
  return result;
}

}  // namespace attn
