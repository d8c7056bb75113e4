#include "model/memory_estimate.h"

#include <unistd.h>
#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "attn/parameters.h"
#include "model/attention_section.h"
#include "model/byte_size.h"
#include "model/token_input.h"

namespace attn {

namespace {

// A row's `needs` that is a model flag ("qk_norm"), not nothing or W_o.
bool is_flag(std::string_view needs) { return !needs.empty() && needs != "W_o"; }

// The rows of attn/block_weights.def a block may have: with `steps`, the number of entries
// their steps record, for the rows a model flag switches on (when it is on); else their
// numbers, counting every row (a flag's when it is on).
long double block_weights(const ModelConfig& config, bool steps) {
  const long double N = config.d_model, d = config.d_head, Hd = config.num_heads * d, Gd = config.kv_heads() * d;
  const auto numbers = [&](BlockWeightShape shape) {
    switch (shape) {
      case BlockWeightShape::HdN:
        return Hd * N;
      case BlockWeightShape::Hd:
        return Hd;
      case BlockWeightShape::Gd:
        return Gd;
      case BlockWeightShape::N:
        return N;
      case BlockWeightShape::d:
        break;
    }
    return d;
  };
  const auto flag_on = [&](std::string_view needs) {
#define ATTN_BLOCK_FLAG(flag, comment) \
  if (needs == #flag) return config.flag;
#include "attn/block_weights.def"
#undef ATTN_BLOCK_FLAG
    return needs.empty() || needs == "W_o";
  };
  long double total = 0;
#define ATTN_BLOCK_WEIGHT(name, kind, shape, needs, step, comment) \
  if (flag_on(needs) && (!steps || is_flag(needs)))                \
    total += steps ? static_cast<long double>(step) : numbers(BlockWeightShape::shape);
#include "attn/block_weights.def"
#undef ATTN_BLOCK_WEIGHT
  return total;
}

// The trace entries of the optional weights `w` has that no model flag decides.
std::size_t weight_steps(const AttentionWeights& w) {
  std::size_t steps = 0;
#define ATTN_BLOCK_WEIGHT(name, kind, shape, needs, step, comment) \
  if (!is_flag(needs) && !w.name.data.empty()) steps += step;
#include "attn/block_weights.def"
#undef ATTN_BLOCK_WEIGHT
  return steps;
}

}  // namespace

std::size_t block_weight_steps(const Model& model) {
  std::size_t most = 0;
  for (const auto& layer : model.encoder) most = std::max(most, weight_steps(layer.attention));
  for (const auto& layer : model.decoder)
    most = std::max({most, weight_steps(layer.self_attention), weight_steps(layer.cross_attention)});
  return most;
}

std::uint64_t estimate_run_bytes(const ModelConfig& config, const RunSize& size) {
  return estimate_run_bytes(config, size, 0);
}

std::uint64_t estimate_run_bytes(const ModelConfig& config, const RunSize& size, std::size_t weight_steps) {
  // Long double, saturating: the inputs can be absurd (d_model 1e6, S 1e5).
  const long double B = size.batch, S = size.seq_len, T = size.target_len, N = config.d_model, H = config.num_heads,
                    d = config.d_head, F = config.d_ff, V = size.vocab;
  const long double Hd = H * d;
  // Weights: W_q, W_k, W_v and the optional weights of attn/block_weights.def (W_o, the
  // biases; a flag's only when it is on) per attention block, 2 FFN matrices, the embedding.
  const long double attention_weights = 3 * N * Hd + block_weights(config, false);
  const long double ffn_weights = (gated(config.activation) ? 3 : 2) * N * F + F + N;
  // Activations the trace keeps per attention block over (S queries, K keys): q, k, v, the
  // head views, k_t, context, concat (7 of B*S*Hd, counting keys as S); scores, scaled,
  // masked, weights (4 of B*H*S*K); output.
  // RoPE adds q_rope and k_rope, grouped-query attention k_repeat and v_repeat, and the
  // optional weights their steps when a model flag switches them on (block_weights.def:
  // QK-norm's q_normed and k_normed).
  // The others' steps (the biases' q_biased, k_biased, v_biased) as the weights say, once
  // they are read (weight_steps, from block_weight_steps).
  const long double variants = (config.positional_encoding == PositionalEncoding::RoPE ? 2 : 0) +
                               (config.kv_heads() != config.num_heads ? 2 : 0) + block_weights(config, true) +
                               static_cast<long double>(weight_steps);
  const auto attention = [&](long double q_len, long double k_len) {
    return (7 + variants) * B * std::max(q_len, k_len) * Hd + 4 * B * H * q_len * k_len + B * q_len * N;
  };
  const auto ffn = [&](long double len) { return B * len * (F + N); };
  const long double norms = 6 * B * std::max(S, T) * N;  // residuals, norms, the layer output
  const long double encoder_activations = attention(S, S) + ffn(S) + norms;
  const long double decoder_activations = attention(T, T) + attention(T, S) + ffn(T) + 1.5L * norms;
  const long double encoder_weights = size.encoder_layers * (attention_weights + ffn_weights);
  const long double decoder_weights = size.decoder_layers * (2 * attention_weights + ffn_weights);
  // Streamed, a layer's intermediates are freed when the next layer starts.
  const long double every_layer = size.encoder_layers * encoder_activations + size.decoder_layers * decoder_activations;
  const long double activations = size.trace_kept || size.backward
                                      ? every_layer
                                      : std::max(size.encoder_layers ? encoder_activations : 0.0L,
                                                 size.decoder_layers ? decoder_activations : 0.0L);
  // The embedding, an untied output head beside it, a learned position table, the inputs,
  // the logits and probabilities.
  const long double io = (size.untied_head ? 2 : 1) * V * N + static_cast<long double>(size.position_rows) * N +
                         3 * B * (S + T) * N + 2 * B * T * V;
  // Each layer's weights are a dozen tensors, each with its shape and axis names on the
  // heap: about 1.6 KiB per encoder layer and 3 KiB per decoder layer besides the numbers
  // (measured: 100,000 attention-only layers of d_model 4 take 222 MB).
  const long double layer_overhead = 4096.0L * (size.encoder_layers + size.decoder_layers);
  // attn grad keeps the forward trace and adds a gradient of the same size for every
  // tensor (kept for the walkthrough and the dump) and for every weight.
  const long double weights = encoder_weights + decoder_weights;
  const long double gradients = size.backward ? every_layer + weights + io : 0.0L;
  // The logit lens keeps, per layer of the last stack, its output and norm (N each) and its
  // logits and probabilities (V each) at every position.
  const long double lens_layers = size.decoder_layers ? size.decoder_layers : size.encoder_layers;
  const long double lens = size.lens ? lens_layers * B * (T > 0 ? T : S) * (2 * N + 2 * V) : 0.0L;
  // Ablation runs the input once more without it first (streamed, no larger than this run)
  // and keeps its next-token probabilities, B*T*V; the run records context_ablated, (B,S,H*d),
  // in at most every layer. (The ablated heads are not known here: every layer is counted.)
  const long double ablation =
      size.ablation ? B * (T > 0 ? T : S) * V + (size.encoder_layers + size.decoder_layers) * B * std::max(S, T) * Hd
                    : 0.0L;
  // Weights kept as stored take their bytes in the mapped files, not 8 each: every stored
  // number is among those counted at 8 above (the untied head too), so taking their 8
  // bytes back leaves a sum of counts, which is never below zero. Each term is signed long
  // double (no unsigned difference can wrap to 2^64), and the sum is held at zero besides.
  const long double stored = static_cast<long double>(size.stored_bytes) - 8.0L * size.stored_numbers;
  const long double bytes = 8.0L * (weights + activations + io + gradients + lens + ablation) + stored +
                            layer_overhead * (size.backward ? 2 : 1);
  if (!(bytes > 0)) return 0;
  return bytes > 1.8e19L ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
}

std::uint64_t default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 4ULL << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 2;
}

std::uint64_t memory_limit(const LoadOptions& options) {
  return options.max_memory_bytes ? options.max_memory_bytes : default_memory_limit();
}

void check_input_memory(LoadContext& context, std::size_t elements, const std::string& path) {
  const std::uint64_t limit = memory_limit(context.options);
  if (static_cast<long double>(elements) * 8 <= limit) return;
  context.run_refused = true;
  context.reader.fail(path, fmt::format("this input alone would need {}, more than the limit of {}",
                                        byte_size_text(static_cast<double>(elements) * 8, ByteStyle::Memory),
                                        byte_size_text(static_cast<double>(limit), ByteStyle::Memory)));
}

void check_run_size(LoadContext& context, const ModelConfig& config, RunSize size, const std::string& path) {
  const std::uint64_t limit = memory_limit(context.options);
  // The forward's trace alone: what grad, --lens and --ablate add is counted by the run's
  // own estimate once the model is loaded (attn/run_memory.h), which this must not exceed.
  size.trace_kept = context.options.trace_kept;
  const std::uint64_t need = estimate_run_bytes(config, size);
  if (need <= limit) return;
  context.run_refused = true;
  context.reader.fail(
      path, fmt::format("this run would need about {} (B={}, S={}, d_model={}, heads={}, layers={}), "
                        "more than the limit of {}; use a smaller model or raise --max-memory",
                        byte_size_text(static_cast<double>(need), ByteStyle::Memory), size.batch, size.seq_len,
                        config.d_model, config.num_heads, size.encoder_layers + size.decoder_layers,
                        byte_size_text(static_cast<double>(limit), ByteStyle::Memory)));
}

void check_weights_size(LoadContext& context, const ModelConfig& config, RunSize size, const std::string& path) {
  const std::uint64_t limit = memory_limit(context.options);
  size.trace_kept = context.options.trace_kept;
  size.backward = context.options.backward;
  size.lens = context.options.lens;
  size.ablation = context.options.ablation;
  const std::uint64_t need = estimate_run_bytes(config, size);
  if (need <= limit) return;
  context.run_refused = true;
  context.reader.fail(path, fmt::format("the weights alone would need about {} (d_model={}, heads={}, d_ff={}, "
                                        "layers={}, vocab={}), more than the limit of {}; use a smaller model or raise "
                                        "--max-memory",
                                        byte_size_text(static_cast<double>(need), ByteStyle::Memory), config.d_model,
                                        config.num_heads, config.d_ff, size.encoder_layers + size.decoder_layers,
                                        size.vocab, byte_size_text(static_cast<double>(limit), ByteStyle::Memory)));
}

void check_run_memory(LoadContext& context, const Model& model, std::size_t batch, std::size_t seq_len,
                      std::size_t target_len, const LayerCounts& layers, const std::string& path) {
  RunSize size;
  size.batch = batch;
  size.seq_len = seq_len;
  size.target_len = target_len;
  size.encoder_layers = layers.encoder;
  size.decoder_layers = layers.decoder;
  size.vocab = model.vocab.size();
  size.position_rows = model.positions.shape.empty() ? 0 : model.positions.shape[0];
  check_run_size(context, model.config, size, path);
}

void check_memory_for_input(LoadContext& context, const Model& model, const RunInput& input,
                            const LayerCounts& layers) {
  std::size_t B = 1, S = 1, T = 1;
  if (!input.X.data.empty()) {
    B = input.X.shape[0];
    S = input.X.shape[1];
  } else {
    const TokenInput& source = input.source_tokens;
    B = std::max(source.texts.size(), source.tokens.size());
    for (const auto& text : source.texts) S = std::max(S, text.size());
    for (const auto& tokens : source.tokens) S = std::max(S, tokens.size());
  }
  if (!input.target_X.data.empty()) T = input.target_X.shape[1];
  for (const auto& text : input.target_tokens.texts) T = std::max(T, text.size());
  for (const auto& tokens : input.target_tokens.tokens) T = std::max(T, tokens.size());
  // A decoder-only model's layers run over the input: counted as a decoder over a target
  // of its length (the cross-attention it lacks makes that an over-estimate).
  if (model.decoder_only()) T = S;
  check_run_memory(context, model, B, S, T, layers, "input");
}

}  // namespace attn

namespace attn {

RunSize run_size_of(const Model& model, const RunInput& input) {
  // The sentences' lengths in tokens, as the run will see them.
  const auto longest = [](const TokenInput& input) {
    std::size_t n = 1;
    for (const auto& tokens : token_lists(input)) n = std::max(n, tokens.size());
    return n;
  };
  RunSize size;
  size.batch = input.has_tokens() ? std::max(input.source_tokens.texts.size(), input.source_tokens.tokens.size())
                                  : input.X.shape[0];
  size.seq_len = input.has_tokens() ? longest(input.source_tokens) : input.X.shape[1];
  size.target_len = model.decoder_only()           ? size.seq_len
                    : !input.target_tokens.empty() ? longest(input.target_tokens)
                    : !input.target_X.data.empty() ? input.target_X.shape[1]
                                                   : 0;
  size.encoder_layers = model.encoder.size();
  size.decoder_layers = model.decoder.size();
  size.vocab = model.vocab.size();
  size.position_rows = model.positions.shape.empty() ? 0 : model.positions.shape[0];
  size.untied_head = model.output.present && !model.output.tied;
  size.lens = input.lens;
  size.ablation = !input.ablation.empty();
  for (const ConstParameter& p : parameters(model))
    if (p.tensor->stored) {
      size.stored_numbers += p.tensor->size();
      size.stored_bytes += p.tensor->size() * stored_type_bytes(p.tensor->stored->type);
    }
  return size;
}

}  // namespace attn
