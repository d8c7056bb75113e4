// Multi-head attention backward, step by step: Figure 2 of the paper read from the top.
#include <algorithm>
#include <string>
#include <vector>

#include "backward/layers_backward.h"
#include "forward/layers.h"
#include "steps/attention.h"
#include "steps/layer_norm.h"
#include "steps/positional_encoding.h"
#include "steps/projection.h"
#include "steps/residual.h"

namespace attn {

namespace {

// The entries the query and key heads went through (head_chain), and what read their last:
// the scores (with the keys), and the keys' repeat with G < H key/value heads, else k_t.
struct HeadChains {
  std::vector<StepKind> queries, keys;
  bool grouped;

  HeadChains(const AttentionWeights& w, bool rope, bool grouped_kv)
      : queries(head_chain(w, HeadsOf::Queries, rope)), keys(head_chain(w, HeadsOf::Keys, rope)), grouped(grouped_kv) {}
  // The keys the scores read (the repeat's, or the key chain's last).
  StepKind keys_read() const { return grouped ? StepKind::RepeatedKeys : keys.back(); }
  const std::vector<StepKind>& of(HeadsOf which) const { return which == HeadsOf::Queries ? queries : keys; }
  // The operands of the gradient of the i-th entry of a chain: the gradient of the entry
  // after it, or of what read the chain's last.
  std::vector<Operand> after(HeadsOf which, std::size_t i, const GradScope& at) const {
    const std::vector<StepKind>& chain = of(which);
    if (i + 1 < chain.size()) return {at.kept_gradient(chain[i + 1])};
    if (which == HeadsOf::Queries) return {at.kept_gradient(StepKind::Scores), at.kept(keys_read())};
    return {at.kept_gradient(grouped ? StepKind::RepeatedKeys : StepKind::TransposedKeys)};
  }
};

// The backward of one projection, X @ W, then the steps on it the block's weights bring (the
// bias, projection_chain): records dL/d each entry of the chain, last first (through a bias
// the same tensor), adds dW and each step's dweight to the weights' gradients and returns dX.
Tensor projection_backward(const Tensor& x, HeadsOf which, StepKind heads, const AttentionWeights& w,
                           const ModelConfig& config, const GradScope& at, Tensor dp) {
  const bool query = which == HeadsOf::Queries, key = which == HeadsOf::Keys;
  const Tensor& W = query ? w.W_q : key ? w.W_k : w.W_v;
  const std::vector<StepKind> chain = projection_chain(w, which);
  const auto read_by = [&](std::size_t i) { return at.kept_gradient(i + 1 < chain.size() ? chain[i + 1] : heads); };
  // each step on the projection, last first: dL/dx from dL/d(its output) and its input (the
  // entry before it); dL/dweight summed into the weight's gradient (the bias: Σ dL/dP)
  for (std::size_t i = chain.size() - 1; i > 0; --i) {
    const WeightStep& s = *std::find_if(weight_steps().begin(), weight_steps().end(),
                                        [&](const WeightStep& row) { return row.kind == chain[i]; });
    HeadStepGradients g = s.backward(at.value(chain[i - 1]), w.*s.weight, config, dp);
    at.record(s.kind, std::move(dp), {read_by(i)});
    at.weights().add(at.weight_id(s.weight_kind), std::move(g.dweight));
    dp = std::move(g.dx);
  }
  // X @ W: dX = dP @ Wᵀ, dW = Xᵀ @ dP
  ProjectionGradients g = linear_projection_backward(x, W, false, dp);
  at.weights().add_projection(at.weight_id(query ? WeightKind::W_q
                                           : key ? WeightKind::W_k
                                                 : WeightKind::W_v),
                              w, std::move(g.dW));
  at.record(chain[0], std::move(dp), {read_by(0)});
  return std::move(g.dx);
}

// Steps 2-1 backward: the heads merged back into Q, K, V, then the projections. Records
// grad.v_heads, grad.k_heads, grad.q_heads, grad.v, grad.k, grad.q.
AttentionInputGradients projections_backward(const StepId& x_q, const StepId& x_kv, const AttentionWeights& w,
                                             const ModelConfig& config, const GradScope& at, Tensor dq_heads,
                                             Tensor dk_heads, Tensor dv_heads, const HeadChains& chains) {
  // (B,H,S,d) -> (B,S,H,d) -> (B,S,H*d); keys and values (B,G,T,d) -> (B,T,G*d)
  Tensor dv = split_heads_backward(dv_heads), dk = split_heads_backward(dk_heads), dq = split_heads_backward(dq_heads);
  // dV = weightsᵀ @ dcontext; dK = (dKᵀ)ᵀ; dQ = dscores @ K (each through the steps on the
  // heads, RoPE and the repeat, when the block has them)
  if (chains.grouped)
    at.record(StepKind::ValueHeads, std::move(dv_heads), {at.kept_gradient(StepKind::RepeatedValues)});
  else
    at.record(StepKind::ValueHeads, std::move(dv_heads),
              {transposed_operand(at.kept(StepKind::AttentionWeights)), at.kept_gradient(StepKind::Context)});
  at.record(StepKind::KeyHeads, std::move(dk_heads), chains.after(HeadsOf::Keys, 0, at));
  at.record(StepKind::QueryHeads, std::move(dq_heads), chains.after(HeadsOf::Queries, 0, at));

  // X @ W + b: dX = dP @ Wᵀ, dW = Xᵀ @ dP, db = Σ dP; K and V read the same x_kv
  const Tensor xq = at.value(x_q);
  const Tensor xkv_own = x_kv == x_q ? Tensor() : at.value(x_kv);
  const Tensor& xkv = x_kv == x_q ? xq : xkv_own;
  AttentionInputGradients g;
  const Tensor dx_v = projection_backward(xkv, HeadsOf::Values, StepKind::ValueHeads, w, config, at, std::move(dv));
  const Tensor dx_k = projection_backward(xkv, HeadsOf::Keys, StepKind::KeyHeads, w, config, at, std::move(dk));
  g.dx_q = projection_backward(xq, HeadsOf::Queries, StepKind::QueryHeads, w, config, at, std::move(dq));
  g.dx_kv = gradient_sum(dx_k, dx_v);
  return g;
}

// Steps 2c-2a backward, each where the block has it, last first: the repeat (each key/value
// head gets the sum of its copies' gradients), RoPE (the gradient turned back by each
// position's angles), the steps on the heads the block's weights bring (weight_steps:
// QK-norm), last row first. dq, dk, dv come in as dL/d(the queries, keys and values the
// scores and the context read) and leave as dL/dq_heads, dk_heads, dv_heads. Records
// grad.v_repeat, k_repeat, k_rope, q_rope, k_normed, q_normed.
void positioned_heads_backward(const AttentionWeights& w, const HeadChains& chains, const ModelConfig& config,
                               const GradScope& at, Tensor& dq, Tensor& dk, Tensor& dv) {
  // (B,H,T,d) -> (B,G,T,d) for the keys and values; the queries stay (B,H,S,d)
  const std::size_t G = config.kv_heads();
  const bool rope = uses_rope(config, at.id(StepKind::Query).block);
  if (chains.grouped) {
    Tensor dv_g = repeat_kv_heads_backward(dv, G), dk_g = repeat_kv_heads_backward(dk, G);
    at.record(StepKind::RepeatedValues, std::move(dv),
              {transposed_operand(at.kept(StepKind::AttentionWeights)), at.kept_gradient(StepKind::Context)});
    at.record(StepKind::RepeatedKeys, std::move(dk), {at.kept_gradient(StepKind::TransposedKeys)});
    dv = std::move(dv_g);
    dk = std::move(dk_g);
  }
  if (rope) {
    const Tensor inv_freq = rope_frequencies(config.rope_dims(), config.rope_theta, config.rope_scaling);
    Tensor dk_heads = rope_rotate_backward(dk, inv_freq), dq_heads = rope_rotate_backward(dq, inv_freq);
    at.record(StepKind::RotatedKeys, std::move(dk), chains.after(HeadsOf::Keys, chains.keys.size() - 1, at));
    at.record(StepKind::RotatedQueries, std::move(dq), chains.after(HeadsOf::Queries, chains.queries.size() - 1, at));
    dk = std::move(dk_heads);
    dq = std::move(dq_heads);
  }
  // each step on the heads, last row first: dL/dx from dL/d(its output) and its input (the
  // entry before it in its chain); dL/dweight summed into the weight's gradient
  const std::vector<WeightStep>& steps = weight_steps();
  for (auto s = steps.rbegin(); s != steps.rend(); ++s) {
    if (s->on != StepOn::Heads) continue;
    const std::vector<StepKind>& chain = chains.of(s->of);
    const auto it = std::find(chain.begin(), chain.end(), s->kind);
    if (it == chain.end()) continue;  // the block has not its weight
    const std::size_t i = static_cast<std::size_t>(it - chain.begin());
    Tensor& dy = s->of == HeadsOf::Queries ? dq : dk;
    HeadStepGradients g = s->backward(at.value(chain[i - 1]), w.*s->weight, config, dy);
    at.record(s->kind, std::move(dy), chains.after(s->of, i, at));
    at.weights().add(at.weight_id(s->weight_kind), std::move(g.dweight));
    dy = std::move(g.dx);
  }
}

}  // namespace

AttentionInputGradients multi_head_attention_backward(const StepId& x_q, const StepId& x_kv, const AttentionWeights& w,
                                                      const StepId* mask, const ModelConfig& config,
                                                      const GradScope& at, const Tensor& doutput) {
  // doutput is (B,S,N) (or (B,S,H*d) without W_o); x_q is (B,S,N), x_kv is (B,T,N)
  const std::size_t H = config.num_heads, G = config.kv_heads();
  const HeadChains chains(w, uses_rope(config, at.id(StepKind::Query).block), G != H);
  // The entries the scores and the context read (the variants' last steps before them).
  const StepKind queries = chains.queries.back();
  const StepKind values = G != H ? StepKind::RepeatedValues : StepKind::ValueHeads;

  // 7. output projection: output = concat @ W_o + b_o
  Tensor dconcat;
  if (w.has_output_projection()) {
    at.record(StepKind::OutputProjection, doutput);
    ProjectionGradients g =
        linear_projection_backward(at.value(StepKind::MergedHeads), w.W_o, !w.b_o.data.empty(), doutput);
    at.weights().add(at.weight_id(WeightKind::W_o), std::move(g.dW));
    if (!w.b_o.data.empty()) at.weights().add(at.weight_id(WeightKind::b_o), std::move(g.db));
    dconcat = std::move(g.dx);
  } else {
    dconcat = doutput;
  }

  // 6. merge heads: (B,S,H*d) -> (B,H,S,d)
  Tensor dcontext = merge_heads_backward(dconcat, H);
  at.record(StepKind::MergedHeads, std::move(dconcat),
            w.has_output_projection() ? std::vector<Operand>{at.kept_gradient(StepKind::OutputProjection),
                                                             transposed_operand(at.weight("W_o", w.W_o))}
                                      : std::vector<Operand>{});

  // 5b. ablation (--ablate): the step is linear and symmetric, so its backward is itself. A
  // zeroed head's rows reached nothing (their gradient is zero); a head set to its mean over
  // the S positions passes each row 1/S of every row's gradient: their mean, in every row.
  StepKind context_read_by = StepKind::MergedHeads;
  if (const std::vector<std::size_t> heads = at.ablated_heads(); !heads.empty()) {
    Tensor dcontext_ablated = std::move(dcontext);
    dcontext = ablate_heads(dcontext_ablated, heads, at.ablates_by_mean());
    at.record(StepKind::ContextAblated, std::move(dcontext_ablated), {at.kept_gradient(StepKind::MergedHeads)});
    context_read_by = StepKind::ContextAblated;
  }

  // 5. context = weights @ V: dweights = dcontext @ Vᵀ, dV = weightsᵀ @ dcontext
  const Tensor weights = at.value(StepKind::AttentionWeights);
  ProductGradients context = attention_context_backward(weights, at.value(values), dcontext);
  at.record(StepKind::Context, std::move(dcontext), {at.kept_gradient(context_read_by)});

  // 4. softmax, then the mask: dx = weights ⊙ (dweights - rowsum(dweights ⊙ weights))
  Tensor dsoftmax = softmax_rows_backward(weights, context.da);
  at.record(StepKind::AttentionWeights, std::move(context.da),
            {at.kept_gradient(StepKind::Context), transposed_operand(at.kept(values))});
  const std::vector<Operand> softmax_operands = {at.kept(StepKind::AttentionWeights),
                                                 at.kept_gradient(StepKind::AttentionWeights)};
  Tensor dscaled;
  if (mask) {
    dscaled = apply_mask_backward(dsoftmax, at.value(*mask));
    at.record(StepKind::MaskedScores, std::move(dsoftmax), softmax_operands);
  } else {
    dscaled = std::move(dsoftmax);
  }

  // 3. scaled = scores / √d; scores = Q @ Kᵀ: dQ = dscores @ K, dKᵀ = Qᵀ @ dscores
  Tensor dscores = scale_scores_backward(dscaled, config.d_head, config.score_scale, config.scores_times_inverse_root);
  at.record(StepKind::ScaledScores, std::move(dscaled),
            mask ? std::vector<Operand>{at.kept_gradient(StepKind::MaskedScores)} : softmax_operands);
  ProductGradients scores = attention_scores_backward(at.value(queries), at.value(StepKind::TransposedKeys), dscores);
  at.record(StepKind::Scores, std::move(dscores), {at.kept_gradient(StepKind::ScaledScores)});
  Tensor dk = transpose_keys_backward(scores.db);
  at.record(StepKind::TransposedKeys, std::move(scores.db),
            {transposed_operand(at.kept(queries)), at.kept_gradient(StepKind::Scores)});
  Tensor dq = std::move(scores.da), dv = std::move(context.db);

  // 2c-2a. the repeat, RoPE, the steps on the heads (QK-norm)
  positioned_heads_backward(w, chains, config, at, dq, dk, dv);

  // 2-1. the heads and the projections
  return projections_backward(x_q, x_kv, w, config, at, std::move(dq), std::move(dk), std::move(dv), chains);
}

}  // namespace attn
