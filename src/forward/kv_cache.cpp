// The KV cache: a decoder run one new token at a time. Each step computes the new
// position's row alone, through the same step functions as the full forward pass; the keys
// and values of the positions before it come from the cache, so a step costs one row's
// work, not the whole prefix's.
#include <optional>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/generate.h"
#include "forward/layers.h"
#include "steps/attention.h"
#include "steps/embedding.h"
#include "steps/output_head.h"
#include "steps/positional_encoding.h"
#include "steps/projection.h"

namespace attn {

namespace {

// (1?,H,t,d) as recorded -> (H,t,d); (G,t,d) for grouped-query keys and values
Tensor heads_of(const TraceRecord& r) {
  const std::size_t n = r.shape.size();
  Tensor t({r.shape[n - 3], r.shape[n - 2], r.shape[n - 1]}, {r.axes[n - 3], "t", "d"});
  std::copy(r.data, r.data + t.size(), t.data.begin());
  return t;
}

// (G,t,d) with (1,G,1,d)'s rows appended -> (G,t+1,d)
Tensor appended(const Tensor& cache, const Tensor& row) {
  const std::size_t G = row.shape[1], d = row.shape[3];
  const std::size_t t = cache.data.empty() ? 0 : cache.shape[1];
  Tensor out({G, t + 1, d}, {row.axes[1], "t", "d"});
  for (std::size_t g = 0; g < G; ++g) {
    std::copy_n(cache.data.begin() + static_cast<std::ptrdiff_t>(g * t * d), t * d,
                out.data.begin() + static_cast<std::ptrdiff_t>(g * (t + 1) * d));
    std::copy_n(row.data.begin() + static_cast<std::ptrdiff_t>(g * d), d,
                out.data.begin() + static_cast<std::ptrdiff_t>((g * (t + 1) + t) * d));
  }
  return out;
}

// (G,t,d), its positions from..t-1 -> (1,G,t-from,d), the layout the attention steps take
Tensor batched(const Tensor& heads, std::size_t from = 0) {
  const std::size_t G = heads.shape[0], t = heads.shape[1], d = heads.shape[2], kept = t - from;
  Tensor out({1, G, kept, d}, {"B", heads.axes[0], "T", "d"});
  for (std::size_t g = 0; g < G; ++g)
    std::copy_n(heads.data.begin() + static_cast<std::ptrdiff_t>((g * t + from) * d), kept * d,
                out.data.begin() + static_cast<std::ptrdiff_t>(g * kept * d));
  return out;
}

// Attention of the new row x (1,1,N), at `position`, to the cached keys and values. With
// `append` (self-attention) the row's own key and value join the cache first; cross-
// attention's cache holds the source's. Records what multi_head_attention records, for one
// query row: with RoPE the new query and key turned at `position` (the cache keeps the keys
// turned, so they are never turned again); with G < H key/value heads the cache holds the G
// heads and the repeat to H happens on every read; with a sliding window W the query reads
// the last W cached positions only.
Traced cached_attention(const Traced& x, const AttentionWeights& w, Tensor& cache_k, Tensor& cache_v, bool append,
                        std::size_t position, const ModelConfig& config, const TraceScope& at) {
  // x is (1,1,N); the cache is (G,t,d); W_q is (N,H*d), W_k/W_v are (N,G*d), W_o (H*d,N)
  const std::size_t H = config.num_heads, G = config.kv_heads();
  const char* kv_axis = G != H ? "G*d" : "H*d";
  const bool rope = uses_rope(config, at.id(StepKind::Query).block);
  const Traced q = projected(x, w, HeadsOf::Queries, "H*d", config, at);
  std::optional<Traced> k, v;
  if (append) {
    k = projected(x, w, HeadsOf::Keys, kv_axis, config, at);
    v = projected(x, w, HeadsOf::Values, kv_axis, config, at);
  }
  // (1,1,H*d) -> (1,H,1,d); with RoPE turned by the angles of `position`
  const Traced query = positioned_heads(at.record(StepKind::QueryHeads, split_heads(q.value, H), {at.operand(q)}),
                                        HeadsOf::Queries, w, rope, position, config, at);
  if (append) {
    // (1,1,G*d) -> (1,G,1,d)
    Tensor k_split = split_heads(k->value, G), v_split = split_heads(v->value, G);
    if (G != H) k_split.axes[1] = v_split.axes[1] = "G";
    Traced k_heads = at.record(StepKind::KeyHeads, std::move(k_split), {at.operand(*k)});
    const Traced v_heads = at.record(StepKind::ValueHeads, std::move(v_split), {at.operand(*v)});
    const Traced keys_g = positioned_heads(std::move(k_heads), HeadsOf::Keys, w, rope, position, config, at);
    cache_k = appended(cache_k, keys_g.value);
    cache_v = appended(cache_v, v_heads.value);
  }
  // the keys this query sees: all cached ones, or the last W with a sliding window
  const std::size_t t = cache_k.shape[1];
  const std::size_t from = append && config.sliding_window && t > config.sliding_window ? t - config.sliding_window : 0;
  Tensor keys = batched(cache_k, from), values = batched(cache_v, from);
  // (1,G,t,d) -> (1,H,t,d): query head h reads key/value head h / (H/G)
  if (G != H) {
    keys = at.record(StepKind::RepeatedKeys, repeat_kv_heads(keys, H)).value;
    values = at.record(StepKind::RepeatedValues, repeat_kv_heads(values, H)).value;
  }
  // (1,H,1,d) @ (1,H,d,t) -> (1,H,1,t): the new query against every cached key
  const Traced k_t = at.record(StepKind::TransposedKeys, transpose_keys(keys));
  const Traced scores =
      at.record(StepKind::Scores, attention_scores(query.value, k_t.value), {at.operand(query), at.operand(k_t)});
  const Traced scaled =
      at.record(StepKind::ScaledScores, scale_scores(scores.value, config.d_head), {at.operand(scores)});
  const Traced weights = at.record(StepKind::AttentionWeights, softmax_rows(scaled.value), {at.operand(scaled)});
  // (1,H,1,t) @ (1,H,t,d) -> (1,H,1,d)
  const Traced context = at.record(StepKind::Context, attention_context(weights.value, values), {at.operand(weights)});
  // --ablate: the named heads' context row zeroed, as the whole run zeroes every row of theirs
  std::optional<Traced> ablated;
  if (const std::vector<std::size_t> heads = at.ablated_heads(); !heads.empty())
    ablated = at.record(StepKind::ContextAblated, ablate_heads(context.value, heads, false), {at.operand(context)});
  const Traced& merged = ablated ? *ablated : context;
  const Traced concat = at.record(StepKind::MergedHeads, merge_heads(merged.value), {at.operand(merged)});
  return at.record(StepKind::OutputProjection, linear_projection(concat.value, w.W_o, w.b_o, "N"),
                   {at.operand(concat), at.weight("W_o", w.W_o)});
}

}  // namespace

KvCacheDecoder::KvCacheDecoder(const Model& model, Ablation ablation)
    : model_(model), ablation_(std::move(ablation)), caches_(model.decoder.size()) {
  if (ablation_.mean && !ablation_.empty())
    throw InputError("--ablate-mean", "",
                     "generation runs one new position at a time with the KV cache, and a head's mean over the "
                     "positions changes with every new one: zero the heads instead (--ablate alone)");
  if (!model.output.present)
    throw InputError(model.source, "output",
                     "this model has no output head, so it cannot choose a next token (generate needs one)");
  if (!model.has_decoder())
    throw InputError(model.source, "decoder",
                     "this model has no decoder to generate with: give a decoder-only model "
                     "(model.architecture \"decoder-only\") or an encoder-decoder");
}

void KvCacheDecoder::observe(const TraceRecord& r) {
  const StepId& id = r.id;
  if (id.gradient) return;
  if (id.kind == StepKind::Logits) {
    const std::size_t V = r.shape.back();
    std::size_t rows = 1;
    for (std::size_t i = 0; i + 1 < r.shape.size(); ++i) rows *= r.shape[i];
    logits_.assign(r.data + (rows - 1) * V, r.data + rows * V);
    return;
  }
  // With RoPE the turned keys (RotatedKeys, recorded after KeyHeads) replace the plain ones.
  if (id.stack != Stack::Decoder || !id.in_layer() ||
      (id.kind != StepKind::KeyHeads && id.kind != StepKind::ValueHeads && id.kind != StepKind::RotatedKeys))
    return;
  LayerCache& cache = caches_.at(static_cast<std::size_t>(id.layer));
  const bool key = id.kind != StepKind::ValueHeads;
  if (id.block == Block::CrossAttention) {
    (key ? cache.cross_k : cache.cross_v) = heads_of(r);
    source_len_ = cache.cross_k.data.empty() ? source_len_ : cache.cross_k.shape[1];
  } else if (id.block == Block::MaskedSelfAttention) {
    (key ? cache.k : cache.v) = heads_of(r);
  }
}

std::size_t KvCacheDecoder::length() const {
  return caches_.empty() || caches_[0].k.data.empty() ? 0 : caches_[0].k.shape[1];
}

StepCost KvCacheDecoder::cost_at(std::size_t position) const {
  // Per layer, one row: Q and W_o (2·N·Hd), K and V (2·N·Gd, G key/value heads), scores and
  // context against the L' keys it sees (2·H·d·L', L' = min(L, W) with a sliding window), the
  // feed-forward (2·N·F; 3·N·F for SwiGLU's gate, up and down); cross-attention: Q and W_o,
  // and 2·H·d·S. The head: N·V. Without the cache the whole prefix of L = position + 1 rows
  // runs again, every score of the L x L matrices (a window masks them, it does not skip
  // them), and the cross-attention's keys and values of the source.
  const ModelConfig& c = model_.config;
  const std::uint64_t N = c.d_model, Hd = c.num_heads * c.d_head, Gd = c.kv_heads() * c.d_head, F = c.d_ff;
  const std::uint64_t V = model_.vocab.size(), ffn = c.activation == Activation::SwiGLU ? 3 : 2;
  const std::uint64_t L = position + 1, S = source_len_, layers = model_.decoder.size();
  const std::uint64_t seen = c.sliding_window ? std::min<std::uint64_t>(L, c.sliding_window) : L;
  const bool cross = model_.has_target();
  StepCost cost;
  const std::uint64_t row = 2 * N * Hd + 2 * N * Gd + ffn * N * F + (cross ? 2 * N * Hd + 2 * Hd * S : 0);
  cost.with_cache = layers * (row + 2 * Hd * seen) + N * V;
  cost.without_cache = layers * (L * row + 2 * Hd * L * L + (cross ? 2 * S * N * Hd : 0)) + L * N * V;
  return cost;
}

const std::vector<double>& KvCacheDecoder::step(std::size_t token, Trace& trace) {
  const ModelConfig& config = model_.config;
  const std::size_t position = length(), N = config.d_model;
  if (config.positional_encoding == PositionalEncoding::Learned && position >= config.max_len)
    throw InputError(
        model_.source, "model.max_len",
        fmt::format("the learned position table has {} rows: no position {} to generate at", config.max_len, position));
  const TraceScope at(trace, model_.decoder_only() ? Sequence::Source : Sequence::Target, &ablation_);

  // 1. the new token's input row: E[id] (· √N) + PE[position], (1,1,N)
  Tensor ids({1, 1}, {"B", "S"});
  ids.data[0] = static_cast<double>(token);
  Tensor x = embedding_lookup(ids, model_.embedding);
  if (config.scale_embeddings) x = scale_embedding(x);
  // (RoPE adds nothing here: it turns the queries and keys inside each self-attention)
  if (config.positional_encoding == PositionalEncoding::Sinusoidal ||
      config.positional_encoding == PositionalEncoding::Learned) {
    const Tensor all = config.positional_encoding == PositionalEncoding::Sinusoidal
                           ? sinusoidal_positions(position + 1, N)
                           : learned_positions(model_.positions, position + 1);
    Tensor row({1, N}, {"S", "N"});
    std::copy_n(all.data.begin() + static_cast<std::ptrdiff_t>(position * N), N, row.data.begin());
    x = add_positions(x, row);
  }
  Traced h = at.record(StepKind::Input, std::move(x));

  // 2. each layer, its attention reading the cache
  for (std::size_t j = 0; j < model_.decoder.size(); ++j) {
    const DecoderLayerWeights& layer = model_.decoder[j];
    LayerCache& cache = caches_[j];
    const TraceScope l = at.layer(Stack::Decoder, static_cast<int>(j));
    h = sublayer_connection(h, layer.norm1, 1, config, l, [&](const Traced& y) {
      return cached_attention(y, layer.self_attention, cache.k, cache.v, true, position, config,
                              l.block(Block::MaskedSelfAttention));
    });
    if (model_.has_target())
      h = sublayer_connection(h, layer.norm2, 2, config, l, [&](const Traced& y) {
        return cached_attention(y, layer.cross_attention, cache.cross_k, cache.cross_v, false, position, config,
                                l.block(Block::CrossAttention));
      });
    const int ffn_norm = model_.has_target() ? 3 : 2;
    Traced out = sublayer_connection(
        h, ffn_norm == 3 ? layer.norm3 : layer.norm2, ffn_norm, config, l,
        [&](const Traced& y) { return feed_forward(y, layer.ffn, config, l.block(Block::FeedForward)); });
    h = l.record(StepKind::LayerOutput, std::move(out.value));
  }
  if (!model_.decoder_norm.gamma.data.empty())
    h = layer_norm_step(h, model_.decoder_norm, StepKind::FinalNorm, 0, config, at.layer(Stack::Decoder));

  // 3. the output head: (1,1,N) -> (1,1,V)
  const Traced logits = at.record(StepKind::Logits,
                                  model_.output.tied ? tied_vocabulary_logits(h.value, model_.embedding)
                                                     : vocabulary_logits(h.value, model_.output.W, model_.output.b),
                                  {at.operand(h)});
  at.record(StepKind::Probabilities, softmax_rows(logits.value), {at.operand(logits)});
  logits_.assign(logits.value.data.begin(), logits.value.data.end());
  cost_ = cost_at(position);
  return logits_;
}

}  // namespace attn
