// The blocks of a transformer layer and the layers themselves, written as the paper draws
// them. Each records its steps under the TraceScope it is given.
#ifndef ATTN_FORWARD_LAYERS_H_
#define ATTN_FORWARD_LAYERS_H_

#include <cstdint>
#include <vector>

#include "attn/model.h"
#include "attn/parameters.h"
#include "forward/trace_scope.h"

namespace attn {

// Multi-head attention. x_q is (B,S,N): the queries come from it; x_kv is (B,T,N): the
// keys and values come from it (the same tensor in self-attention). mask is (S,T) or
// (B,S,T), additive, or nullptr. Returns (B,S,N) through W_o, else the concat (B,S,H*d).
// Records q, k, v, q_heads, k_heads, v_heads, k_t, scores, scaled_scores, masked_scores
// (with a mask), weights, context, concat, output (with W_o); with RoPE q_rope and k_rope
// after the split, with grouped-query attention (G < H key/value heads) k_repeat and v_repeat.
Traced multi_head_attention(const Traced& x_q, const Traced& x_kv, const AttentionWeights& weights, const Traced* mask,
                            const ModelConfig& config, const TraceScope& at);

// Which of the queries, keys and values a step a block's weight brings turns
// (attn/step_kinds.def's ATTN_WEIGHT_STEP rows).
enum class HeadsOf : std::uint8_t { Queries, Keys, Values };
// Where it turns them: the projection before the head split, or the heads after it.
enum class StepOn : std::uint8_t { Projection, Heads };

// One of the projections into heads, x · W_q (W_k, W_v; recorded as Query, Key or Value),
// then each step on the projection the block's weights bring (weight_steps: the bias,
// BiasedQuery, BiasedKey, BiasedValue): x is (B,S,N), W is (N,M) -> (B,S,M), its last axis
// named out_axis.
Traced projected(const Traced& x, const AttentionWeights& w, HeadsOf which, const char* out_axis,
                 const ModelConfig& config, const TraceScope& at);

// dL/dx and dL/dweight of a step a block's weight brings.
struct HeadStepGradients {
  Tensor dx;
  Tensor dweight;
};

// A step that a block's weight brings, on a projection (the biases) or on the query or key
// heads (QK-norm): an ATTN_WEIGHT_STEP row of the table of step kinds, attn/step_kinds.def.
struct WeightStep {
  Tensor AttentionWeights::*weight;  // the block's weight; empty: the block has not this step
  const char* weight_name;           // "b_q": the weight's name among the entry's operands
  WeightKind weight_kind;
  StepOn on;
  HeadsOf of;
  StepKind kind;
  // x is Q (B,S,H*d) (K, V (B,T,G*d)), or the heads (B,H,S,d) (keys (B,G,T,d)) -> the same shape
  Tensor (*step)(const Tensor& x, const Tensor& weight, const ModelConfig& config);
  // dy is dL/d(the step's output), x's shape -> dL/dx, dL/dweight
  HeadStepGradients (*backward)(const Tensor& x, const Tensor& weight, const ModelConfig& config, const Tensor& dy);
};

// The ATTN_WEIGHT_STEP rows, in the table's order.
const std::vector<WeightStep>& weight_steps();

// The entries a projection goes through, in order: Query (Key, Value), then each step on
// the projection the block's weights bring (weight_steps: BiasedQuery). The last is what
// the head split reads.
std::vector<StepKind> projection_chain(const AttentionWeights& w, HeadsOf which);

// The entries the query (or key) heads go through, in order: QueryHeads (KeyHeads), then
// each step on the heads the block's weights bring (weight_steps), then RotatedQueries
// (RotatedKeys) with RoPE. The last is what the scores read (before the keys' repeat).
std::vector<StepKind> head_chain(const AttentionWeights& w, HeadsOf which, bool rope);

// The query or key heads the scores read: `heads` (B,H,S,d) (keys (B,G,T,d)) through each
// step on the heads the block's weights bring (weight_steps: QK-norm), then RoPE (when
// `rope`; row s at position first_position + s); the heads themselves without any.
Traced positioned_heads(Traced heads, HeadsOf which, const AttentionWeights& w, bool rope, std::size_t first_position,
                        const ModelConfig& config, const TraceScope& at);

// Whether an attention block turns its queries and keys with RoPE: the model's positional
// encoding is "rope" and the block is a self-attention (never cross-attention).
bool uses_rope(const ModelConfig& config, Block block);

// The position-wise feed-forward network: (B,S,N) -> (B,S,F) -> (B,S,N). Records hidden
// (act(x W_1 + b_1), or SwiGLU's silu(x W_1) ⊙ (x W_3)) and output.
Traced feed_forward(const Traced& x, const FeedForwardWeights& ffn, const ModelConfig& config, const TraceScope& at);

// LayerNorm of x (RMSNorm when config.norm says so), recorded as `kind` (AddNorm, PreNorm or FinalNorm) number n.
Traced layer_norm_step(const Traced& x, const NormWeights& norm, StepKind kind, int n, const ModelConfig& config,
                       const TraceScope& at);

// x + sublayer, recorded as residual n.
Traced residual_step(const Traced& x, const Traced& sublayer, int n, const TraceScope& at);

// A layer's result, x recorded again as its layer_output (the same numbers). (B,S,N) -> (B,S,N).
Traced layer_output(Traced x, const TraceScope& at);

// One sub-layer with its residual connection and its LayerNorm where the model puts it:
//   post-norm (the paper):          x = LN(x + f(x))
//   pre-norm (norm_first, GPT-2):   x = x + f(LN(x))
template <typename Sublayer>
Traced sublayer_connection(const Traced& x, const NormWeights& norm, int n, const ModelConfig& config,
                           const TraceScope& at, Sublayer f) {
  if (config.norm_first) return residual_step(x, f(layer_norm_step(x, norm, StepKind::PreNorm, n, config, at)), n, at);
  const Traced sum = residual_step(x, f(x), n, at);
  return layer_norm_step(sum, norm, StepKind::AddNorm, n, config, at);
}

// An encoder layer: self-attention, then feed-forward, each a sub-layer connection.
// x is (B,S,N) -> (B,S,N).
Traced encoder_layer(const Traced& x, const EncoderLayerWeights& layer, const Traced* mask, const ModelConfig& config,
                     const TraceScope& at);

// A decoder layer: masked self-attention over the target, cross-attention to the
// encoder's output (memory), feed-forward. y is (B,T,N), memory (B,S,N) -> (B,T,N).
// (A cached step reads its keys and values from the cache: memory may be nullptr, the masks
// are, since its one new row sees every key it reads.)
Traced decoder_layer(const Traced& y, const Traced* memory, const DecoderLayerWeights& layer, const Traced* self_mask,
                     const Traced* cross_mask, const ModelConfig& config, const TraceScope& at);

// A decoder-only (GPT-style) layer: causal self-attention, then feed-forward, each a
// sub-layer connection; no cross-attention. x is (B,S,N) -> (B,S,N).
Traced decoder_only_layer(const Traced& x, const DecoderLayerWeights& layer, const Traced* mask,
                          const ModelConfig& config, const TraceScope& at);

}  // namespace attn

#endif  // ATTN_FORWARD_LAYERS_H_
