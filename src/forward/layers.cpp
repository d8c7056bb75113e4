// The encoder and decoder layers, and the pieces they share.
#include "forward/layers.h"

#include <optional>
#include <utility>

#include "attn/step_roles.h"
#include "steps/feed_forward.h"
#include "steps/layer_norm.h"
#include "steps/residual.h"

namespace attn {

Traced feed_forward(const Traced& x, const FeedForwardWeights& ffn, const ModelConfig& config, const TraceScope& at) {
  // (B,S,N) @ (N,F) -> (B,S,F); (B,S,F) @ (F,N) -> (B,S,N)
  const Traced hidden =
      gated(config.activation)
          ? at.record(StepKind::FfnHidden, gated_hidden(x.value, ffn.W_1, ffn.W_3, config.activation),
                      {at.operand(x), at.weight("W_1", ffn.W_1), at.weight("W_3", ffn.W_3)})
          : at.record(StepKind::FfnHidden, feed_forward_hidden(x.value, ffn.W_1, ffn.b_1, config.activation),
                      {at.operand(x), at.weight("W_1", ffn.W_1)});
  Traced out = at.record(StepKind::FfnOutput, feed_forward_output(hidden.value, ffn.W_2, ffn.b_2),
                         {at.operand(hidden), at.weight("W_2", ffn.W_2)});
  TapeEntry ran{TapeOp::FeedForward, out.id, x.id};
  ran.ffn = &ffn;
  at.tape(std::move(ran));
  return out;
}

Traced layer_norm_step(const Traced& x, const NormWeights& norm, StepKind kind, int n, const ModelConfig& config,
                       const TraceScope& at) {
  // (B,S,N) -> (B,S,N)
  Traced out = at.record_rows(
      kind, x,
      [&] {
        return config.norm == Norm::RMSNorm ? rms_norm(x.value, norm.gamma, config.layer_norm_eps)
               : config.norm == Norm::RMSNormPlusOne
                   ? rms_norm_plus_one(x.value, norm.gamma, config.layer_norm_eps)
                   : layer_norm(x.value, norm.gamma, norm.beta, config.layer_norm_eps);
      },
      n);
  // (the logit lens reads the run; nothing learns through it)
  if (!in_logit_lens(kind)) {
    TapeEntry ran{TapeOp::Norm, out.id, x.id};
    ran.norm = &norm;
    at.tape(std::move(ran));
  }
  return out;
}

Traced residual_step(const Traced& x, const Traced& sublayer, int n, const TraceScope& at) {
  // (B,S,N) + (B,S,N) -> (B,S,N)
  Traced out = at.record(StepKind::Residual, residual_add(x.value, sublayer.value),
                         {at.operand(x), at.operand(sublayer)}, Trace::Check::Values, n);
  at.tape({TapeOp::Residual, out.id, x.id, sublayer.id});
  return out;
}

Traced layer_output(Traced x, const TraceScope& at) {
  // (B,S,N) -> (B,S,N): the same numbers, under the layer's name
  const StepId read = x.id;
  Traced out = at.record(StepKind::LayerOutput, std::move(x.value));
  at.tape({TapeOp::LayerOutput, out.id, read});
  return out;
}

namespace {

// A layer a resumed run (RunContext::resume) starts after: its output as the run resumed
// computed it, recorded (so that the hooks on it run) instead of computed.
std::optional<Traced> resumed_layer(const TraceScope& at) {
  const ResumeAt* resume = at.context() ? at.context()->resume : nullptr;
  if (!resume) return std::nullopt;
  const StepId here = at.id(StepKind::LayerOutput);
  const bool before = here.stack == resume->stack ? here.layer < resume->layer
                                                  : here.stack == Stack::Encoder && resume->stack == Stack::Decoder;
  if (!before) return std::nullopt;
  return at.record(StepKind::LayerOutput, resume->output(here.stack, here.layer), {}, Trace::Check::InputsChecked);
}

}  // namespace

Traced encoder_layer(const Traced& x, const EncoderLayerWeights& layer, const Traced* mask, const ModelConfig& config,
                     const TraceScope& at) {
  // x is (B,S,N) -> (B,S,N)
  if (std::optional<Traced> kept = resumed_layer(at)) return std::move(*kept);
  const Traced x1 = sublayer_connection(x, layer.norm1, 1, config, at, [&](const Traced& h) {
    return multi_head_attention(h, h, layer.attention, mask, config, at.block(Block::SelfAttention));
  });
  Traced x2 = sublayer_connection(x1, layer.norm2, 2, config, at, [&](const Traced& h) {
    return feed_forward(h, layer.ffn, config, at.block(Block::FeedForward));
  });
  return layer_output(std::move(x2), at);
}

Traced decoder_layer(const Traced& y, const Traced* memory, const DecoderLayerWeights& layer, const Traced* self_mask,
                     const Traced* cross_mask, const ModelConfig& config, const TraceScope& at) {
  // y is (B,T,N), memory is (B,S,N) -> (B,T,N)
  if (std::optional<Traced> kept = resumed_layer(at)) return std::move(*kept);
  const Traced y1 = sublayer_connection(y, layer.norm1, 1, config, at, [&](const Traced& h) {
    return multi_head_attention(h, h, layer.self_attention, self_mask, config, at.block(Block::MaskedSelfAttention));
  });
  const Traced y2 = sublayer_connection(y1, layer.norm2, 2, config, at, [&](const Traced& h) {
    return multi_head_attention(h, memory ? *memory : h, layer.cross_attention, cross_mask, config,
                                at.block(Block::CrossAttention));
  });
  Traced y3 = sublayer_connection(y2, layer.norm3, 3, config, at, [&](const Traced& h) {
    return feed_forward(h, layer.ffn, config, at.block(Block::FeedForward));
  });
  return layer_output(std::move(y3), at);
}

Traced decoder_only_layer(const Traced& x, const DecoderLayerWeights& layer, const Traced* mask,
                          const ModelConfig& config, const TraceScope& at) {
  // x is (B,S,N) -> (B,S,N)
  if (std::optional<Traced> kept = resumed_layer(at)) return std::move(*kept);
  const Traced x1 = sublayer_connection(x, layer.norm1, 1, config, at, [&](const Traced& h) {
    return multi_head_attention(h, h, layer.self_attention, mask, config, at.block(Block::MaskedSelfAttention));
  });
  Traced x2 = sublayer_connection(x1, layer.norm2, 2, config, at, [&](const Traced& h) {
    return feed_forward(h, layer.ffn, config, at.block(Block::FeedForward));
  });
  return layer_output(std::move(x2), at);
}

}  // namespace attn
