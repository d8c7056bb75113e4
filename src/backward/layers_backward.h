// The backward of the blocks of forward/layers.h, each replayed from the tape
// (backward.cpp). Each function is handed the gradient of its block's result, records it
// and every gradient inside the block (grad.<name>, the reverse of the forward's order),
// adds the weights' gradients, and returns the gradient of its input, which the replay
// records once every block that read that input has added its share.
#ifndef ATTN_BACKWARD_LAYERS_BACKWARD_H_
#define ATTN_BACKWARD_LAYERS_BACKWARD_H_

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

}  // namespace attn

#endif  // ATTN_BACKWARD_LAYERS_BACKWARD_H_
