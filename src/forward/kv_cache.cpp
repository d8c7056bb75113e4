// The KV cache: a decoder run one new token at a time. Each step computes the new
// position's row alone, through the same step functions as the full forward pass; the keys
// and values of the positions before it come from the cache, so a step costs one row's
// work, not the whole prefix's.
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

// (1?,H,t,d) as recorded -> (H,t,d)
Tensor heads_of(const TraceRecord& r) {
  const std::size_t n = r.shape.size();
  Tensor t({r.shape[n - 3], r.shape[n - 2], r.shape[n - 1]}, {"H", "t", "d"});
  std::copy(r.data, r.data + t.size(), t.data.begin());
  return t;
}

// (H,t,d) with (1,H,1,d)'s rows appended -> (H,t+1,d)
Tensor appended(const Tensor& cache, const Tensor& row) {
  const std::size_t H = row.shape[1], d = row.shape[3];
  const std::size_t t = cache.data.empty() ? 0 : cache.shape[1];
  Tensor out({H, t + 1, d}, {"H", "t", "d"});
  for (std::size_t h = 0; h < H; ++h) {
    std::copy_n(cache.data.begin() + static_cast<std::ptrdiff_t>(h * t * d), t * d,
                out.data.begin() + static_cast<std::ptrdiff_t>(h * (t + 1) * d));
    std::copy_n(row.data.begin() + static_cast<std::ptrdiff_t>(h * d), d,
                out.data.begin() + static_cast<std::ptrdiff_t>((h * (t + 1) + t) * d));
  }
  return out;
}

// (H,t,d) -> (1,H,t,d), the layout the attention steps take
Tensor batched(const Tensor& heads) {
  Tensor t = heads;
  t.shape.insert(t.shape.begin(), 1);
  t.axes = {"B", "H", "T", "d"};
  return t;
}

// Attention of the new row x (1,1,N) to the cached keys and values. With `append` (self-
// attention) the row's own key and value join the cache first; cross-attention's cache
// holds the source's. Records what multi_head_attention records, for one query row.
Traced cached_attention(const Traced& x, const AttentionWeights& w, Tensor& cache_k, Tensor& cache_v, bool append,
                        const ModelConfig& config, const TraceScope& at) {
  // x is (1,1,N); the cache is (H,t,d); W_q/W_k/W_v are (N,H*d), W_o (H*d,N)
  const std::size_t H = config.num_heads;
  const Traced q = at.record(StepKind::Query, linear_projection(x.value, w.W_q, w.b_q, "H*d"),
                             {at.operand(x), at.weight("W_q", w.W_q)});
  std::optional<Traced> k, v;
  if (append) {
    k = at.record(StepKind::Key, linear_projection(x.value, w.W_k, w.b_k, "H*d"),
                  {at.operand(x), at.weight("W_k", w.W_k)});
    v = at.record(StepKind::Value, linear_projection(x.value, w.W_v, w.b_v, "H*d"),
                  {at.operand(x), at.weight("W_v", w.W_v)});
  }
  // (1,1,H*d) -> (1,H,1,d)
  const Traced q_heads = at.record(StepKind::QueryHeads, split_heads(q.value, H), {at.operand(q)});
  if (append) {
    const Traced k_heads = at.record(StepKind::KeyHeads, split_heads(k->value, H), {at.operand(*k)});
    const Traced v_heads = at.record(StepKind::ValueHeads, split_heads(v->value, H), {at.operand(*v)});
    cache_k = appended(cache_k, k_heads.value);
    cache_v = appended(cache_v, v_heads.value);
  }
  // (1,H,1,d) @ (1,H,d,t) -> (1,H,1,t): the new query against every cached key
  const Traced k_t = at.record(StepKind::TransposedKeys, transpose_keys(batched(cache_k)));
  const Traced scores =
      at.record(StepKind::Scores, attention_scores(q_heads.value, k_t.value), {at.operand(q_heads), at.operand(k_t)});
  const Traced scaled =
      at.record(StepKind::ScaledScores, scale_scores(scores.value, config.d_head), {at.operand(scores)});
  const Traced weights = at.record(StepKind::AttentionWeights, softmax_rows(scaled.value), {at.operand(scaled)});
  // (1,H,1,t) @ (1,H,t,d) -> (1,H,1,d)
  const Traced context =
      at.record(StepKind::Context, attention_context(weights.value, batched(cache_v)), {at.operand(weights)});
  const Traced concat = at.record(StepKind::MergedHeads, merge_heads(context.value), {at.operand(context)});
  return at.record(StepKind::OutputProjection, linear_projection(concat.value, w.W_o, w.b_o, "N"),
                   {at.operand(concat), at.weight("W_o", w.W_o)});
}

}  // namespace

KvCacheDecoder::KvCacheDecoder(const Model& model) : model_(model), caches_(model.decoder.size()) {
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
  if (id.stack != Stack::Decoder || !id.in_layer() ||
      (id.kind != StepKind::KeyHeads && id.kind != StepKind::ValueHeads))
    return;
  LayerCache& cache = caches_.at(static_cast<std::size_t>(id.layer));
  const bool key = id.kind == StepKind::KeyHeads;
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
  // Per layer, one row: Q, K, V and W_o (4·N·Hd), scores and context against L keys (2·H·d·L),
  // the feed-forward (2·N·F); cross-attention: Q and W_o, and 2·H·d·S. The head: N·V.
  // Without the cache the whole prefix of L = position + 1 rows runs again, every score of
  // the L x L matrices, and the cross-attention's keys and values of the source.
  const ModelConfig& c = model_.config;
  const std::uint64_t N = c.d_model, Hd = c.num_heads * c.d_head, F = c.d_ff, V = model_.vocab.size();
  const std::uint64_t L = position + 1, S = source_len_, layers = model_.decoder.size();
  const bool cross = model_.has_target();
  StepCost cost;
  const std::uint64_t row = 4 * N * Hd + 2 * N * F + (cross ? 2 * N * Hd + 2 * Hd * S : 0);
  cost.with_cache = layers * (row + 2 * Hd * L) + N * V;
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
  const TraceScope at(trace, model_.decoder_only() ? Sequence::Source : Sequence::Target);

  // 1. the new token's input row: E[id] (· √N) + PE[position], (1,1,N)
  Tensor ids({1, 1}, {"B", "S"});
  ids.data[0] = static_cast<double>(token);
  Tensor x = embedding_lookup(ids, model_.embedding);
  if (config.scale_embeddings) x = scale_embedding(x);
  if (config.positional_encoding != PositionalEncoding::None) {
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
      return cached_attention(y, layer.self_attention, cache.k, cache.v, true, config,
                              l.block(Block::MaskedSelfAttention));
    });
    if (model_.has_target())
      h = sublayer_connection(h, layer.norm2, 2, config, l, [&](const Traced& y) {
        return cached_attention(y, layer.cross_attention, cache.cross_k, cache.cross_v, false, config,
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
