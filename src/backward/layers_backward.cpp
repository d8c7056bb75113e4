// The encoder and decoder layers backward, and the pieces they share, from the top of each
// layer down.
#include "backward/layers_backward.h"

#include "steps/feed_forward.h"
#include "steps/layer_norm.h"
#include "steps/residual.h"

namespace attn {

namespace {

// The entry a sub-layer connection's result is recorded as: post-norm add_normN, pre-norm
// residualN.
StepId connection_output(const ModelConfig& config, const GradScope& at, int n) {
  return at.id(config.norm_first ? StepKind::Residual : StepKind::AddNorm, n);
}

}  // namespace

Tensor feed_forward_backward(const StepId& x, const FeedForwardWeights& ffn, const ModelConfig& config,
                             const GradScope& at, const Tensor& doutput) {
  // doutput is (B,S,N) -> dx (B,S,N), through hidden (B,S,F)
  at.record(StepKind::FfnOutput, doutput);
  const Tensor hidden = at.value(StepKind::FfnHidden);
  // ffn = hidden @ W_2 + b_2
  ProjectionGradients out = feed_forward_output_backward(hidden, ffn.W_2, !ffn.b_2.data.empty(), doutput);
  at.weights().add(at.weight_id(WeightKind::W_2), std::move(out.dW));
  if (!ffn.b_2.data.empty()) at.weights().add(at.weight_id(WeightKind::b_2), std::move(out.db));
  // hidden = silu(x @ W_1) ⊙ (x @ W_3)
  if (config.activation == Activation::SwiGLU) {
    SwigluGradients in = swiglu_hidden_backward(at.value(x), ffn.W_1, ffn.W_3, out.dx);
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
  if (config.norm == Norm::RMSNorm) {
    RmsNormGradients g = rms_norm_backward(at.value(x), norm.gamma, config.layer_norm_eps, dy);
    at.weights().add(at.weight_id(WeightKind::Gamma, n), std::move(g.dgamma));
    return std::move(g.dx);
  }
  LayerNormGradients g = layer_norm_backward(at.value(x), norm.gamma, config.layer_norm_eps, dy);
  at.weights().add(at.weight_id(WeightKind::Gamma, n), std::move(g.dgamma));
  at.weights().add(at.weight_id(WeightKind::Beta, n), std::move(g.dbeta));
  return std::move(g.dx);
}

Tensor sublayer_connection_backward(const StepId& x, const NormWeights& norm, int n, const ModelConfig& config,
                                    const GradScope& at, const Tensor& doutput, const SublayerBackward& f) {
  if (config.norm_first) {
    // out = x + f(LN(x)): the residual passes doutput to x and to f; LN's gradient adds to x's
    at.record(StepKind::Residual, residual_add_backward(doutput), {}, n);
    const Tensor dnorm = f(at.id(StepKind::PreNorm, n), doutput);
    const Tensor dx = layer_norm_step_backward(x, norm, StepKind::PreNorm, n, config, at, dnorm);
    return gradient_sum(doutput, dx);
  }
  // out = LN(x + f(x)): LN first, then the residual passes its gradient to x and to f
  const Tensor dsum =
      layer_norm_step_backward(at.id(StepKind::Residual, n), norm, StepKind::AddNorm, n, config, at, doutput);
  at.record(StepKind::Residual, residual_add_backward(dsum), {at.kept_gradient(StepKind::AddNorm, n)}, n);
  const Tensor dx = f(x, dsum);
  return gradient_sum(dsum, dx);
}

Tensor encoder_layer_backward(const StepId& x, const EncoderLayerWeights& layer, const StepId* mask,
                              const ModelConfig& config, const GradScope& at, const Tensor& doutput) {
  // doutput is (B,S,N) -> dx (B,S,N)
  at.record(StepKind::LayerOutput, doutput);
  const Tensor dx1 = sublayer_connection_backward(
      connection_output(config, at, 1), layer.norm2, 2, config, at, doutput, [&](const StepId& h, const Tensor& d) {
        return feed_forward_backward(h, layer.ffn, config, at.block(Block::FeedForward), d);
      });
  return sublayer_connection_backward(x, layer.norm1, 1, config, at, dx1, [&](const StepId& h, const Tensor& d) {
    const AttentionInputGradients g =
        multi_head_attention_backward(h, h, layer.attention, mask, config, at.block(Block::SelfAttention), d);
    return gradient_sum(g.dx_q, g.dx_kv);
  });
}

Tensor decoder_layer_backward(const StepId& y, const StepId& memory, const DecoderLayerWeights& layer,
                              const StepId& self_mask, const StepId* cross_mask, const ModelConfig& config,
                              const GradScope& at, const Tensor& doutput, Tensor& dmemory) {
  // doutput is (B,T,N) -> dy (B,T,N); dmemory (B,S,N) += the cross-attention's share
  at.record(StepKind::LayerOutput, doutput);
  const Tensor dy2 = sublayer_connection_backward(
      connection_output(config, at, 2), layer.norm3, 3, config, at, doutput, [&](const StepId& h, const Tensor& d) {
        return feed_forward_backward(h, layer.ffn, config, at.block(Block::FeedForward), d);
      });
  const Tensor dy1 = sublayer_connection_backward(
      connection_output(config, at, 1), layer.norm2, 2, config, at, dy2, [&](const StepId& h, const Tensor& d) {
        AttentionInputGradients g = multi_head_attention_backward(h, memory, layer.cross_attention, cross_mask, config,
                                                                  at.block(Block::CrossAttention), d);
        dmemory = dmemory.data.empty() ? std::move(g.dx_kv) : gradient_sum(dmemory, g.dx_kv);
        return std::move(g.dx_q);
      });
  return sublayer_connection_backward(y, layer.norm1, 1, config, at, dy1, [&](const StepId& h, const Tensor& d) {
    const AttentionInputGradients g = multi_head_attention_backward(h, h, layer.self_attention, &self_mask, config,
                                                                    at.block(Block::MaskedSelfAttention), d);
    return gradient_sum(g.dx_q, g.dx_kv);
  });
}

Tensor decoder_only_layer_backward(const StepId& x, const DecoderLayerWeights& layer, const StepId& mask,
                                   const ModelConfig& config, const GradScope& at, const Tensor& doutput) {
  // doutput is (B,S,N) -> dx (B,S,N)
  at.record(StepKind::LayerOutput, doutput);
  const Tensor dx1 = sublayer_connection_backward(
      connection_output(config, at, 1), layer.norm2, 2, config, at, doutput, [&](const StepId& h, const Tensor& d) {
        return feed_forward_backward(h, layer.ffn, config, at.block(Block::FeedForward), d);
      });
  return sublayer_connection_backward(x, layer.norm1, 1, config, at, dx1, [&](const StepId& h, const Tensor& d) {
    const AttentionInputGradients g = multi_head_attention_backward(h, h, layer.self_attention, &mask, config,
                                                                    at.block(Block::MaskedSelfAttention), d);
    return gradient_sum(g.dx_q, g.dx_kv);
  });
}

}  // namespace attn
