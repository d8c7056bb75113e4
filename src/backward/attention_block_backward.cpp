// Multi-head attention backward, step by step: Figure 2 of the paper read from the top.
#include <string>

#include "backward/layers_backward.h"
#include "steps/attention.h"
#include "steps/projection.h"
#include "steps/residual.h"

namespace attn {

namespace {

// The backward of one projection, X @ W + b -> P: adds dW and db to the weights' gradients
// and returns dX.
Tensor projection_backward(const Tensor& x, const Tensor& W, const Tensor& b, WeightKind w_kind, WeightKind b_kind,
                           const AttentionWeights& weights, const GradScope& at, const Tensor& dp) {
  ProjectionGradients g = linear_projection_backward(x, W, !b.data.empty(), dp);
  at.weights().add_projection(at.weight_id(w_kind), weights, g.dW);
  if (!b.data.empty()) at.weights().add(at.weight_id(b_kind), std::move(g.db));
  return std::move(g.dx);
}

// Steps 1-2 backward: the heads merged back into Q, K, V, then the projections. Records
// grad.v_heads, grad.k_heads, grad.q_heads, grad.v, grad.k, grad.q.
AttentionInputGradients projections_backward(const StepId& x_q, const StepId& x_kv, const AttentionWeights& w,
                                             const GradScope& at, const Tensor& dq_heads, const Tensor& dk_heads,
                                             const Tensor& dv_heads) {
  // dV = weightsᵀ @ dcontext; dK = (dKᵀ)ᵀ; dQ = dscores @ K
  at.record(StepKind::ValueHeads, dv_heads,
            {transposed_operand(at.kept(StepKind::AttentionWeights)), at.kept_gradient(StepKind::Context)});
  at.record(StepKind::KeyHeads, dk_heads, {at.kept_gradient(StepKind::TransposedKeys)});
  at.record(StepKind::QueryHeads, dq_heads, {at.kept_gradient(StepKind::Scores), at.kept(StepKind::KeyHeads)});
  // (B,H,S,d) -> (B,S,H,d) -> (B,S,H*d)
  const Tensor dv = split_heads_backward(dv_heads);
  at.record(StepKind::Value, dv, {at.kept_gradient(StepKind::ValueHeads)});
  const Tensor dk = split_heads_backward(dk_heads);
  at.record(StepKind::Key, dk, {at.kept_gradient(StepKind::KeyHeads)});
  const Tensor dq = split_heads_backward(dq_heads);
  at.record(StepKind::Query, dq, {at.kept_gradient(StepKind::QueryHeads)});

  // X @ W + b: dX = dP @ Wᵀ, dW = Xᵀ @ dP, db = Σ dP; K and V read the same x_kv
  const Tensor xq = at.value(x_q);
  const Tensor xkv = x_kv == x_q ? xq : at.value(x_kv);
  AttentionInputGradients g;
  g.dx_q = projection_backward(xq, w.W_q, w.b_q, WeightKind::W_q, WeightKind::b_q, w, at, dq);
  const Tensor dx_k = projection_backward(xkv, w.W_k, w.b_k, WeightKind::W_k, WeightKind::b_k, w, at, dk);
  const Tensor dx_v = projection_backward(xkv, w.W_v, w.b_v, WeightKind::W_v, WeightKind::b_v, w, at, dv);
  g.dx_kv = gradient_sum(dx_k, dx_v);
  return g;
}

}  // namespace

AttentionInputGradients multi_head_attention_backward(const StepId& x_q, const StepId& x_kv, const AttentionWeights& w,
                                                      const StepId* mask, const ModelConfig& config,
                                                      const GradScope& at, const Tensor& doutput) {
  // doutput is (B,S,N) (or (B,S,H*d) without W_o); x_q is (B,S,N), x_kv is (B,T,N)
  const std::size_t H = config.num_heads;

  // 7. output projection: output = concat @ W_o + b_o
  Tensor dconcat = doutput;
  if (w.has_output_projection()) {
    at.record(StepKind::OutputProjection, doutput);
    ProjectionGradients g =
        linear_projection_backward(at.value(StepKind::MergedHeads), w.W_o, !w.b_o.data.empty(), doutput);
    at.weights().add(at.weight_id(WeightKind::W_o), std::move(g.dW));
    if (!w.b_o.data.empty()) at.weights().add(at.weight_id(WeightKind::b_o), std::move(g.db));
    dconcat = std::move(g.dx);
    at.record(StepKind::MergedHeads, dconcat,
              {at.kept_gradient(StepKind::OutputProjection), transposed_operand(at.weight("W_o", w.W_o))});
  } else {
    at.record(StepKind::MergedHeads, dconcat);
  }

  // 6. merge heads: (B,S,H*d) -> (B,H,S,d)
  const Tensor dcontext = merge_heads_backward(dconcat, H);
  at.record(StepKind::Context, dcontext, {at.kept_gradient(StepKind::MergedHeads)});

  // 5. context = weights @ V: dweights = dcontext @ Vᵀ, dV = weightsᵀ @ dcontext
  const Tensor weights = at.value(StepKind::AttentionWeights);
  const Tensor v_heads = at.value(StepKind::ValueHeads);
  ProductGradients context = attention_context_backward(weights, v_heads, dcontext);
  at.record(StepKind::AttentionWeights, context.da,
            {at.kept_gradient(StepKind::Context), transposed_operand(at.kept(StepKind::ValueHeads))});

  // 4. softmax, then the mask: dx = weights ⊙ (dweights - rowsum(dweights ⊙ weights))
  Tensor dscaled = softmax_rows_backward(weights, context.da);
  if (mask) {
    at.record(StepKind::MaskedScores, dscaled,
              {at.kept(StepKind::AttentionWeights), at.kept_gradient(StepKind::AttentionWeights)});
    dscaled = apply_mask_backward(dscaled, at.value(*mask));
    at.record(StepKind::ScaledScores, dscaled, {at.kept_gradient(StepKind::MaskedScores)});
  } else {
    at.record(StepKind::ScaledScores, dscaled,
              {at.kept(StepKind::AttentionWeights), at.kept_gradient(StepKind::AttentionWeights)});
  }

  // 3. scaled = scores / √d; scores = Q @ Kᵀ: dQ = dscores @ K, dKᵀ = Qᵀ @ dscores
  const Tensor dscores = scale_scores_backward(dscaled, config.d_head);
  at.record(StepKind::Scores, dscores, {at.kept_gradient(StepKind::ScaledScores)});
  const Tensor q_heads = at.value(StepKind::QueryHeads);
  const Tensor k_t = at.value(StepKind::TransposedKeys);
  const ProductGradients scores = attention_scores_backward(q_heads, k_t, dscores);
  at.record(StepKind::TransposedKeys, scores.db,
            {transposed_operand(at.kept(StepKind::QueryHeads)), at.kept_gradient(StepKind::Scores)});
  const Tensor dk_heads = transpose_keys_backward(scores.db);

  // 2-1. the heads and the projections
  return projections_backward(x_q, x_kv, w, at, scores.da, dk_heads, context.db);
}

}  // namespace attn
