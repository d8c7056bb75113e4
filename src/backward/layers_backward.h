// The backward pass of the blocks and layers of forward/layers.h, in the reverse of their
// order. Each function is handed the gradient of its block's result, records it and every
// gradient inside the block (grad.<name>, the reverse of the forward's order), adds the
// weights' gradients, and returns the gradient of its input, which the caller records once
// every path to that input has added its share.
#ifndef ATTN_BACKWARD_LAYERS_BACKWARD_H_
#define ATTN_BACKWARD_LAYERS_BACKWARD_H_

#include <functional>

#include "attn/model.h"
#include "backward/grad_scope.h"

namespace attn {

// Multi-head attention: x_q and x_kv are the forward entries the queries and the keys and
// values were projected from (the same entry in self-attention), mask the block's mask or
// nullptr; doutput is dL/d(the block's result: output, or concat without W_o).
struct AttentionInputGradients {
  Tensor dx_q;   // through Q
  Tensor dx_kv;  // through K and V
};
AttentionInputGradients multi_head_attention_backward(const StepId& x_q, const StepId& x_kv, const AttentionWeights& w,
                                                      const StepId* mask, const ModelConfig& config,
                                                      const GradScope& at, const Tensor& doutput);

// The feed-forward network of input x; doutput is dL/d(ffn.output).
Tensor feed_forward_backward(const StepId& x, const FeedForwardWeights& ffn, const ModelConfig& config,
                             const GradScope& at, const Tensor& doutput);

// LayerNorm (or RMSNorm, config.norm) of input x recorded as `kind` number n; dy is dL/d(its result).
Tensor layer_norm_step_backward(const StepId& x, const NormWeights& norm, StepKind kind, int n,
                                const ModelConfig& config, const GradScope& at, const Tensor& dy);

// A sub-layer's backward: given the forward entry it read and dL/d(its result), returns
// dL/d(what it read), recording its own gradients.
using SublayerBackward = std::function<Tensor(const StepId& input, const Tensor& doutput)>;

// The backward of forward/layers.h's sublayer_connection, post-norm or pre-norm as the
// model is: x is the connection's input, doutput dL/d(its result). Returns dL/dx: the
// residual's share plus the sub-layer's.
Tensor sublayer_connection_backward(const StepId& x, const NormWeights& norm, int n, const ModelConfig& config,
                                    const GradScope& at, const Tensor& doutput, const SublayerBackward& f);

// An encoder layer, x its input entry; doutput is dL/d(its output).
Tensor encoder_layer_backward(const StepId& x, const EncoderLayerWeights& layer, const StepId* mask,
                              const ModelConfig& config, const GradScope& at, const Tensor& doutput);

// A decoder layer, y its input entry, memory the encoder's output entry; dmemory gets the
// cross-attention's share of dL/dmemory added (every decoder layer reads the memory).
Tensor decoder_layer_backward(const StepId& y, const StepId& memory, const DecoderLayerWeights& layer,
                              const StepId& self_mask, const StepId* cross_mask, const ModelConfig& config,
                              const GradScope& at, const Tensor& doutput, Tensor& dmemory);

// A decoder-only layer (causal self-attention, feed-forward), x its input entry; doutput is
// dL/d(its output).
Tensor decoder_only_layer_backward(const StepId& x, const DecoderLayerWeights& layer, const StepId& mask,
                                   const ModelConfig& config, const GradScope& at, const Tensor& doutput);

}  // namespace attn

#endif  // ATTN_BACKWARD_LAYERS_BACKWARD_H_
