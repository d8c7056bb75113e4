// An attention block's weights: "attention" in an encoder layer, "self_attention" and
// "cross_attention" in a decoder layer.
#ifndef ATTN_MODEL_ATTENTION_SECTION_H_
#define ATTN_MODEL_ATTENTION_SECTION_H_

#include <string>

#include "attn/model.h"
#include "model/json_reader.h"
#include "model/load_context.h"
#include "model/tensor_values.h"

namespace attn {

// W_q, W_k, W_v fused (N, H*d), or given per head under "heads" (each (N, d)) and fused
// here; the optional W_o (H*d, N) and biases.
AttentionWeights read_attention(LoadContext& context, const Json& value, const std::string& path,
                                const ModelConfig& config);

// The shape of an optional block weight (attn/block_weights.def's shape column): (H*d, N),
// (H*d,), (G*d,), (N,) or (d,).
enum class BlockWeightShape { HdN, Hd, Gd, N, d };

// The shape, axis names and meaning of an optional block weight (attn/block_weights.def's
// shape column) for this model's sizes.
TensorRequest block_weight_request(BlockWeightShape shape, const ModelConfig& config);

// Sets the fused W_q, W_k, W_v (N, H*d) from the per-head matrices in w.heads.
void fuse_attention_heads(AttentionWeights& w, const ModelConfig& config);

}  // namespace attn

#endif  // ATTN_MODEL_ATTENTION_SECTION_H_
