// The encoder and decoder layers backward, and the pieces they share, from the top of each
// layer down.
#include "backward/layers_backward.h"

#include "steps/feed_forward.h"
#include "steps/layer_norm.h"

namespace attn {

Tensor feed_forward_backward(const StepId& x, const FeedForwardWeights& ffn, const ModelConfig& config,
                             const GradScope& at, const Tensor& doutput) {
  // doutput is (B,S,N) -> dx (B,S,N), through hidden (B,S,F)
  at.record(StepKind::FfnOutput, doutput);
  const Tensor hidden = at.value(StepKind::FfnHidden);
  // ffn = hidden @ W_2 + b_2
  ProjectionGradients out = feed_forward_output_backward(hidden, ffn.W_2, !ffn.b_2.data.empty(), doutput);
  at.weights().add(at.weight_id(WeightKind::W_2), std::move(out.dW));
  if (!ffn.b_2.data.empty()) at.weights().add(at.weight_id(WeightKind::b_2), std::move(out.db));
  // hidden = act(x @ W_1) ⊙ (x @ W_3): SwiGLU's silu, GeGLU's GELU
  if (gated(config.activation)) {
    SwigluGradients in = gated_hidden_backward(at.value(x), ffn.W_1, ffn.W_3, config.activation, out.dx);
    at.record(StepKind::FfnHidden, std::move(out.dx),
              {at.kept_gradient(StepKind::FfnOutput), transposed_operand(at.weight("W_2", ffn.W_2))});
    at.weights().add(at.weight_id(WeightKind::W_1), std::move(in.dW_1));
    at.weights().add(at.weight_id(WeightKind::W_3), std::move(in.dW_3));
    return std::move(in.dx);
  }
  // hidden = act(x @ W_1 + b_1)
  ProjectionGradients in =
      feed_forward_hidden_backward(at.value(x), ffn.W_1, ffn.b_1, config.activation, hidden, out.dx);
  at.record(StepKind::FfnHidden, std::move(out.dx),
            {at.kept_gradient(StepKind::FfnOutput), transposed_operand(at.weight("W_2", ffn.W_2))});
  at.weights().add(at.weight_id(WeightKind::W_1), std::move(in.dW));
  if (!ffn.b_1.data.empty()) at.weights().add(at.weight_id(WeightKind::b_1), std::move(in.db));
  return std::move(in.dx);
}

Tensor layer_norm_step_backward(const StepId& x, const NormWeights& norm, StepKind kind, int n,
                                const ModelConfig& config, const GradScope& at, const Tensor& dy) {
  // dy is (B,S,N) -> dx (B,S,N)
  at.record(kind, dy, {}, n);
  if (root_mean_square(config.norm)) {
    RmsNormGradients g = config.norm == Norm::RMSNorm
                             ? rms_norm_backward(at.value(x), norm.gamma, config.layer_norm_eps, dy)
                             : rms_norm_plus_one_backward(at.value(x), norm.gamma, config.layer_norm_eps, dy);
    at.weights().add(at.weight_id(WeightKind::Gamma, n), std::move(g.dgamma));
    return std::move(g.dx);
  }
  LayerNormGradients g = layer_norm_backward(at.value(x), norm.gamma, config.layer_norm_eps, dy);
  at.weights().add(at.weight_id(WeightKind::Gamma, n), std::move(g.dgamma));
  at.weights().add(at.weight_id(WeightKind::Beta, n), std::move(g.dbeta));
  return std::move(g.dx);
}

}  // namespace attn
