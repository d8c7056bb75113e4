// Multi-head attention, step by step, as the paper's Figure 2 draws it.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/shape_only.h"
#include "forward/layers.h"
#include "steps/attention.h"
#include "steps/layer_norm.h"
#include "steps/positional_encoding.h"
#include "steps/projection.h"

namespace attn {

namespace {
// Steps that only move numbers or cannot leave the finite range (Trace::Check).
constexpr Trace::Check kInputsChecked = Trace::Check::InputsChecked;

// Keys or values split into G heads: their head axis named "G" when G differs from H.
Tensor kv_heads(Tensor t, std::size_t G, std::size_t H) {
  if (G != H) t.axes[1] = "G";
  return t;
}

}  // namespace

const std::vector<WeightStep>& weight_steps() {
  // each row's calls, of x (the projection or the heads), weight and config: attn/step_kinds.def
  static const std::vector<WeightStep> rows = {
#define ATTN_STEP(...)
#define ATTN_WEIGHT_STEP(step_kind, trace, display, page, why, forward, backward, place, alias, summary, member, \
                         weight_kind, shape, needs, comment, step_on, heads_of, step_call, backward_call)        \
  {&AttentionWeights::member,                                                                                    \
   #member,                                                                                                      \
   WeightKind::weight_kind,                                                                                      \
   StepOn::step_on,                                                                                              \
   HeadsOf::heads_of,                                                                                            \
   StepKind::step_kind,                                                                                          \
   []([[maybe_unused]] const Tensor& x, [[maybe_unused]] const Tensor& weight,                                   \
      [[maybe_unused]] const ModelConfig& config) -> Tensor { return step_call; },                               \
   []([[maybe_unused]] const Tensor& x, [[maybe_unused]] const Tensor& weight,                                   \
      [[maybe_unused]] const ModelConfig& config, [[maybe_unused]] const Tensor& dy) -> HeadStepGradients {      \
     auto [dx, dweight] = backward_call;                                                                         \
     return {std::move(dx), std::move(dweight)};                                                                 \
   }},
#include "attn/step_kinds.def"
#undef ATTN_WEIGHT_STEP
#undef ATTN_STEP
  };
  return rows;
}

Traced projected(const Traced& x, const AttentionWeights& w, HeadsOf which, const char* out_axis,
                 const ModelConfig& config, const TraceScope& at) {
  // x is (B,S,N), W is (N,M) -> (B,S,M)
  const bool query = which == HeadsOf::Queries, key = which == HeadsOf::Keys;
  const std::string letter = query ? "q" : key ? "k" : "v";
  const Tensor& W = query ? w.W_q : key ? w.W_k : w.W_v;
  Traced out =
      at.record(query ? StepKind::Query
                : key ? StepKind::Key
                      : StepKind::Value,
                linear_projection(x.value, W, Tensor(), out_axis), {at.operand(x), at.weight("W_" + letter, W)});
  // each step on it the block's weights bring (the bias: + b, (B,S,M) + (M,) -> (B,S,M))
  for (const WeightStep& s : weight_steps()) {
    const Tensor& weight = w.*s.weight;
    if (s.on == StepOn::Projection && s.of == which && !weight.data.empty())
      out = at.record(s.kind, s.step(out.value, weight, config), {at.operand(out), at.weight(s.weight_name, weight)});
  }
  return out;
}

std::vector<StepKind> projection_chain(const AttentionWeights& w, HeadsOf which) {
  std::vector<StepKind> chain = {which == HeadsOf::Queries ? StepKind::Query
                                 : which == HeadsOf::Keys  ? StepKind::Key
                                                           : StepKind::Value};
  for (const WeightStep& s : weight_steps())
    if (s.on == StepOn::Projection && s.of == which && !(w.*s.weight).data.empty()) chain.push_back(s.kind);
  return chain;
}

std::vector<StepKind> head_chain(const AttentionWeights& w, HeadsOf which, bool rope) {
  const bool queries = which == HeadsOf::Queries;
  std::vector<StepKind> chain = {queries ? StepKind::QueryHeads : StepKind::KeyHeads};
  for (const WeightStep& s : weight_steps())
    if (s.on == StepOn::Heads && s.of == which && !(w.*s.weight).data.empty()) chain.push_back(s.kind);
  if (rope) chain.push_back(queries ? StepKind::RotatedQueries : StepKind::RotatedKeys);
  return chain;
}

Traced positioned_heads(Traced heads, HeadsOf which, const AttentionWeights& w, bool rope, std::size_t first_position,
                        const ModelConfig& config, const TraceScope& at) {
  // heads is (B,H,S,d) (keys (B,G,T,d)) -> the same shape
  for (const WeightStep& s : weight_steps()) {
    const Tensor& weight = w.*s.weight;
    if (s.on == StepOn::Heads && s.of == which && !weight.data.empty())
      heads = at.record_rows(s.kind, heads, [&] { return s.step(heads.value, weight, config); });
  }
  if (rope)
    heads =
        at.record(which == HeadsOf::Queries ? StepKind::RotatedQueries : StepKind::RotatedKeys,
                  rope_rotate(heads.value, rope_frequencies(config.rope_dims(), config.rope_theta, config.rope_scaling),
                              first_position),
                  {at.operand(heads)});
  return heads;
}

bool uses_rope(const ModelConfig& config, Block block) {
  // RoPE turns self-attention only: a cross-attention's queries and keys come from two
  // different sequences, whose positions do not compare.
  return config.positional_encoding == PositionalEncoding::RoPE && block != Block::CrossAttention;
}

namespace {

// The heads' context back to one row per position: ablated first when the run says so
// (--ablate), merged, through W_o when the block has it. context is (B,H,S,d) -> (B,S,N),
// else the concat (B,S,H*d).
Traced merged_output(const Traced& context, const AttentionWeights& w, const TraceScope& at) {
  // 5b. ablation (--ablate): the named heads' context rows zeroed or replaced by their mean
  // over positions, (B,H,S,d) -> (B,H,S,d)
  std::optional<Traced> ablated;
  if (const std::vector<std::size_t> heads = at.ablated_heads(); !heads.empty())
    ablated = at.record(StepKind::ContextAblated, ablate_heads(context.value, heads, at.ablates_by_mean()),
                        {at.operand(context)}, kInputsChecked);
  const Traced& merged = ablated ? *ablated : context;

  // 6. merge heads: (B,H,S,d) -> (B,S,H,d) -> (B,S,H*d)
  Traced concat = at.record(StepKind::MergedHeads, merge_heads(merged.value), {at.operand(merged)}, kInputsChecked);
  if (!w.has_output_projection()) return concat;

  // 7. output projection: (B,S,H*d) @ (H*d,N) -> (B,S,N)
  return at.record(StepKind::OutputProjection, linear_projection(concat.value, w.W_o, w.b_o, "N"),
                   {at.operand(concat), at.weight("W_o", w.W_o)});
}

}  // namespace

namespace {

// The queries and the G key/value heads the scores and the context read.
struct HeadsRead {
  Traced queries, keys, values;
  bool from_cache = false;  // a cached step's keys and values: read from the cache, not entries
  // A cached step's keys already transposed, (1,H,d,T), when no step comes between the
  // cache and the scores (G = H): copied out of the cache once, in the scores' layout.
  std::optional<Tensor> keys_transposed;
};

// Steps 1-2b: the projections, the head split and the steps on the heads (QK-norm, RoPE), and
// the KV cache. A full run (x_q (B,S,N), x_kv (B,T,N)) projects and splits every row, and fills
// the cache of a decoder layer when the run has one (its keys after RoPE: never turned
// again). A cached step (x (1,1,N) at position p) projects its one row; self-attention
// appends its key and value to the cache, cross-attention's cache holds the source's; the
// query reads the cache, or with a sliding window W its last W positions.
HeadsRead project_heads(const Traced& x_q, const Traced& x_kv, const AttentionWeights& w, const ModelConfig& config,
                        const TraceScope& at) {
  const std::size_t H = config.num_heads, G = config.kv_heads();
  const char* kv_axis = G != H ? "G*d" : "H*d";
  const bool rope = uses_rope(config, at.id(StepKind::Query).block);
  const bool step = at.cached_step(), cross = at.id(StepKind::Query).block == Block::CrossAttention;
  const std::size_t first = step ? at.position() : 0;
  LayerCache* cache = at.cache();

  // 1. project: (B,S,N) @ (N,H*d) -> (B,S,H*d); keys and values (B,T,G*d) (each plus its
  // bias, b_q (H*d,), b_k and b_v (G*d,), as a step of its own when the block has one)
  const Traced q = projected(x_q, w, HeadsOf::Queries, "H*d", config, at);
  std::optional<Traced> k, v;
  if (!(step && cross)) {
    k = projected(x_kv, w, HeadsOf::Keys, kv_axis, config, at);
    v = projected(x_kv, w, HeadsOf::Values, kv_axis, config, at);
  }
  // 2. split heads: (B,S,H*d) -> (B,S,H,d) -> (B,H,S,d); keys and values into G heads.
  // 2a-2b. the steps on the heads the block's weights bring (QK-norm), then RoPE: each
  // self-attention head's queries and keys turned by their positions (a step: the query
  // first, as it is all the step needs from the cache's point of view)
  const auto split = [&](StepKind kind, const Traced& p, std::size_t heads) {
    return at.record(kind, kv_heads(split_heads(p.value, heads), heads, H), {at.operand(p)}, kInputsChecked);
  };
  HeadsRead read;
  std::optional<Traced> q_heads;
  if (step)
    read.queries = positioned_heads(split(StepKind::QueryHeads, q, H), HeadsOf::Queries, w, rope, first, config, at);
  if (!step) q_heads = split(StepKind::QueryHeads, q, H);
  std::optional<Traced> k_heads;
  if (k) {
    k_heads = split(StepKind::KeyHeads, *k, G);
    read.values = split(StepKind::ValueHeads, *v, G);
  }
  if (!step) read.queries = positioned_heads(std::move(*q_heads), HeadsOf::Queries, w, rope, 0, config, at);
  if (k_heads) read.keys = positioned_heads(std::move(*k_heads), HeadsOf::Keys, w, rope, first, config, at);
  if (!cache) return read;

  CachedHeads& cache_k = cross ? cache->cross_k : cache->k;
  CachedHeads& cache_v = cross ? cache->cross_v : cache->v;
  if (!step) {  // (1,G,T,d) -> (G,T,d)
    cache_k.assign(read.keys.value);
    cache_v.assign(read.values.value);
    return read;
  }
  if (!cross) {  // (G,t,d) with (1,G,1,d)'s rows -> (G,t+1,d)
    cache_k.append(read.keys.value);
    cache_v.append(read.values.value);
  }
  // the keys this query sees: all cached ones, or the last W with a sliding window,
  // (1,G,T,d) (keys (1,H,d,T) when G = H)
  const std::size_t t = cache_k.length(), window = config.window_of(at.id(StepKind::Query).layer);
  const std::size_t from = !cross && window && t > window ? t - window : 0;
  if (G == H)
    read.keys_transposed = cache_k.transposed_heads(from);
  else
    read.keys.value = cache_k.heads(from);
  read.values.value = cache_v.heads(from);
  read.from_cache = true;
  return read;
}

// Says so when a softmax met rows with every key masked.
void warn_fully_masked(std::size_t fully_masked, const Traced& weights, const TraceScope& at) {
  if (fully_masked)
    at.trace().warn(weights.id,
                    fmt::format("{} row{} had every key masked; softmax is undefined there (0/0), so those rows get "
                                "zero weights and a zero context vector",
                                fully_masked, fully_masked == 1 ? "" : "s"));
}

// 3b-4 one step at a time, each reading the value the step before recorded, which a hook
// may have replaced: scores (B,H,S,T) -> scaled -> masked (with a mask) -> weights.
Traced weights_step_by_step(const Traced& scores, const Traced* mask, const ModelConfig& config, const TraceScope& at) {
  // |score / √d| <= |score| for d >= 1: finite when the scores are
  const Traced scaled =
      at.record(StepKind::ScaledScores,
                scale_scores(scores.value, config.d_head, config.score_scale, config.scores_times_inverse_root),
                {at.operand(scores)}, kInputsChecked);
  std::optional<Traced> masked;
  if (mask)
    masked = at.record(StepKind::MaskedScores, apply_mask(scaled.value, mask->value),
                       {at.operand(scaled), at.operand(*mask)});
  const Traced& softmax_input = masked ? *masked : scaled;  // not a copy of the scores
  std::size_t fully_masked = 0;
  // in [0, 1] whenever its inputs are finite or -inf (a masked key)
  Traced weights = at.record(StepKind::AttentionWeights, softmax_rows(softmax_input.value, &fully_masked),
                             {at.operand(softmax_input)}, kInputsChecked);
  warn_fully_masked(fully_masked, weights, at);
  return weights;
}

// 3-4. scores: (B,H,S,d) @ (B,H,d,T) -> (B,H,S,T), scaled, masked (optional: a cached
// step's one row sees every key it reads) and softmax over keys, each (B,H,S,T). The last
// three in one pass over the rows (scores_to_weights), which checks the scores and the
// masked scores as it goes, unless a hook may replace one of the first three.
Traced attention_weights(const Traced& queries, const Traced& k_t, const Traced* mask, const ModelConfig& config,
                         const TraceScope& at) {
  Tensor scores = attention_scores(queries.value, k_t.value);
  std::vector<Operand> score_operands = {at.operand(queries), at.operand(k_t)};
  const Trace& trace = at.trace();
  if (trace.has_hook(at.id(StepKind::Scores)) || trace.has_hook(at.id(StepKind::ScaledScores)) ||
      trace.has_hook(at.id(StepKind::MaskedScores)))
    return weights_step_by_step(at.record(StepKind::Scores, std::move(scores), std::move(score_operands)), mask, config,
                                at);
  // The scaled and masked scores are not kept when nothing reads them (Trace::discards_values).
  const bool keep_scaled = !trace.discards_values();
  ScoresToWeights w = scores_to_weights(scores, mask ? &mask->value : nullptr, config.d_head, config.score_scale,
                                        config.scores_times_inverse_root, keep_scaled);
  const auto checked = [](bool yes) { return yes ? kInputsChecked : Trace::Check::Values; };
  const Traced scored =
      at.record(StepKind::Scores, std::move(scores), std::move(score_operands), checked(w.scores_checked));
  const Traced scaled = at.record(StepKind::ScaledScores, std::move(w.scaled), {at.operand(scored)}, kInputsChecked);
  // a masked score the pass found not finite: the numbers again, for the check to name it
  if (mask && !w.masked_checked && w.masked.data.size() != element_count(w.masked.shape))
    w.masked = apply_mask(
        scale_scores(scored.value, config.d_head, config.score_scale, config.scores_times_inverse_root), mask->value);
  std::optional<Traced> masked;
  if (mask)
    masked = at.record(StepKind::MaskedScores, std::move(w.masked), {at.operand(scaled), at.operand(*mask)},
                       checked(w.masked_checked));
  Traced weights = at.record(StepKind::AttentionWeights, std::move(w.weights), {at.operand(masked ? *masked : scaled)},
                             kInputsChecked);
  warn_fully_masked(w.fully_masked_rows, weights, at);
  return weights;
}

}  // namespace

Traced multi_head_attention(const Traced& x_q, const Traced& x_kv, const AttentionWeights& w, const Traced* mask,
                            const ModelConfig& config, const TraceScope& at) {
  // x_q is (B,S,N), x_kv is (B,T,N), W_q is (N,H*d), W_k/W_v are (N,G*d), W_o is (H*d,N)
  const std::size_t H = config.num_heads, G = config.kv_heads();
  HeadsRead read = project_heads(x_q, x_kv, w, config, at);
  // A cached step's keys and values are the cache's, not entries: steps on them name no operand.
  const auto operands = [&](const Traced& t) {
    return read.from_cache ? std::vector<Operand>{} : std::vector<Operand>{at.operand(t)};
  };

  // 2c. grouped-query attention: the G key/value heads repeated for the H query heads,
  // (B,G,T,d) -> (B,H,T,d)
  if (G != H) {
    read.keys =
        at.record(StepKind::RepeatedKeys, repeat_kv_heads(read.keys.value, H), operands(read.keys), kInputsChecked);
    read.values = at.record(StepKind::RepeatedValues, repeat_kv_heads(read.values.value, H), operands(read.values),
                            kInputsChecked);
  }
  const Traced& queries = read.queries;

  // 3. scores: (B,H,T,d) -> (B,H,d,T); (B,H,S,d) @ (B,H,d,T) -> (B,H,S,T), scaled, masked
  // and softmax over keys: (B,H,S,T) -> (B,H,S,T)
  const Traced k_t =
      at.record(StepKind::TransposedKeys,
                read.keys_transposed ? std::move(*read.keys_transposed) : transpose_keys(read.keys.value),
                operands(read.keys), kInputsChecked);
  const Traced weights = attention_weights(queries, k_t, mask, config, at);

  // 5. context: (B,H,S,T) @ (B,H,T,d) -> (B,H,S,d)
  std::vector<Operand> context_operands = {at.operand(weights)};
  if (!read.from_cache) context_operands.push_back(at.operand(read.values));
  const Traced context =
      at.record(StepKind::Context, attention_context(weights.value, read.values.value), std::move(context_operands));

  Traced out = merged_output(context, w, at);
  TapeEntry ran{TapeOp::Attention, out.id, x_q.id, x_kv.id};
  if (mask) ran.mask = mask->id;
  ran.attention = &w;
  at.tape(std::move(ran));
  return out;
}

}  // namespace attn
