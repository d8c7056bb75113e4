// The forward pass: calls the step functions in order and records each result into the
// trace under its documented name (docs/trace-names.md).
#ifndef ATTN_FORWARD_H_
#define ATTN_FORWARD_H_

#include <string>

#include "attn/model.h"
#include "attn/trace.h"

namespace attn {

// Multi-head attention for one block. x_q is (B,S,N): queries come from it; x_kv is
// (B,T,N): keys and values come from it (the same tensor in self-attention). mask is
// empty, (S,T) or (B,S,T), additive, recorded earlier as `mask_name`. Returns (B,S,N) with
// W_o, else the concat (B,S,H*d).
// Records <prefix>q, k, v, q_heads, k_heads, v_heads, k_t, scores, scaled_scores,
// masked_scores (with a mask), weights, context, concat, output (with W_o).
// x_q_name and x_kv_name are the trace names of the inputs (so the walkthrough can show the
// rows a projection multiplies).
Tensor multi_head_attention(const Tensor& x_q, const std::string& x_q_name, const Tensor& x_kv,
                            const std::string& x_kv_name, const AttentionWeights& weights, const ModelConfig& config,
                            const Tensor& mask, const std::string& mask_name, const std::string& prefix, Trace& trace);

// Runs the whole model: tokens and embeddings (or X), the encoder stack, the decoder
// stack and the output head, whichever the model has. Returns the last tensor computed
// (probabilities with an output head, else the last layer's output).
// Throws InputError for input that only the run can reject (an unknown word and no <UNK>).
Tensor run_model(const Model& model, Trace& trace);

}  // namespace attn

#endif  // ATTN_FORWARD_H_
