#include "attn/forward.h"

#include <fmt/format.h>

#include "attn/attention.h"

namespace attn {

Tensor multi_head_attention(const Tensor& x_q, const Tensor& x_kv, const AttentionWeights& w,
                            const ModelConfig& config, const Tensor& mask, const std::string& prefix, Trace& trace) {
  // x_q is (B,S,N), x_kv is (B,T,N), W_q/W_k/W_v are (N,H*d), W_o is (H*d,N)
  const std::size_t H = config.num_heads;

  // 1. project: (B,S,N) @ (N,H*d) -> (B,S,H*d)
  const Tensor q = linear_projection(x_q, w.W_q, w.b_q, "H*d");
  trace.record(prefix + "q", q, {trace.operand("x", x_q), Operand{"W_q", w.W_q.shape, w.W_q.axes}});
  const Tensor k = linear_projection(x_kv, w.W_k, w.b_k, "H*d");
  trace.record(prefix + "k", k, {trace.operand("x", x_kv), Operand{"W_k", w.W_k.shape, w.W_k.axes}});
  const Tensor v = linear_projection(x_kv, w.W_v, w.b_v, "H*d");
  trace.record(prefix + "v", v, {trace.operand("x", x_kv), Operand{"W_v", w.W_v.shape, w.W_v.axes}});

  // 2. split heads: (B,S,H*d) -> (B,S,H,d) -> (B,H,S,d)
  const Tensor q_heads = split_heads(q, H);
  trace.record(prefix + "q_heads", q_heads, {trace.operand(prefix + "q", q)});
  const Tensor k_heads = split_heads(k, H);
  trace.record(prefix + "k_heads", k_heads, {trace.operand(prefix + "k", k)});
  const Tensor v_heads = split_heads(v, H);
  trace.record(prefix + "v_heads", v_heads, {trace.operand(prefix + "v", v)});

  // 3. scores: (B,H,T,d) -> (B,H,d,T); (B,H,S,d) @ (B,H,d,T) -> (B,H,S,T)
  const Tensor k_t = transpose_keys(k_heads);
  trace.record(prefix + "k_t", k_t, {trace.operand(prefix + "k_heads", k_heads)});
  const Tensor scores = attention_scores(q_heads, k_t);
  trace.record(prefix + "scores", scores, {trace.operand(prefix + "q_heads", q_heads), trace.operand(prefix + "k_t", k_t)});
  const Tensor scaled = scale_scores(scores, config.d_head);
  trace.record(prefix + "scaled_scores", scaled, {trace.operand(prefix + "scores", scores)});

  // 4. mask (optional) and softmax over keys: (B,H,S,T) -> (B,H,S,T)
  Tensor to_softmax = scaled;
  if (!mask.data.empty()) {
    to_softmax = apply_mask(scaled, mask);
    trace.record(prefix + "masked_scores", to_softmax,
                 {trace.operand(prefix + "scaled_scores", scaled), trace.operand("encoder.mask", mask)});
  }
  std::size_t fully_masked = 0;
  const Tensor weights = softmax_rows(to_softmax, &fully_masked);
  trace.record(prefix + "weights", weights, {trace.operand(prefix + (mask.data.empty() ? "scaled_scores" : "masked_scores"), to_softmax)});
  if (fully_masked)
    trace.warn(prefix + "weights",
               fmt::format("{} row{} had every key masked; softmax is undefined there (0/0), so those rows get zero "
                           "weights and a zero context vector",
                           fully_masked, fully_masked == 1 ? "" : "s"));

  // 5. context: (B,H,S,T) @ (B,H,T,d) -> (B,H,S,d)
  const Tensor context = attention_context(weights, v_heads);
  trace.record(prefix + "context", context, {trace.operand(prefix + "weights", weights), trace.operand(prefix + "v_heads", v_heads)});

  // 6. merge heads: (B,H,S,d) -> (B,S,H,d) -> (B,S,H*d)
  const Tensor concat = merge_heads(context);
  trace.record(prefix + "concat", concat, {trace.operand(prefix + "context", context)});
  if (!w.has_output_projection()) return concat;

  // 7. output projection: (B,S,H*d) @ (H*d,N) -> (B,S,N)
  const Tensor output = linear_projection(concat, w.W_o, w.b_o, "N");
  trace.record(prefix + "output", output, {trace.operand(prefix + "concat", concat), Operand{"W_o", w.W_o.shape, w.W_o.axes}});
  return output;
}

Tensor run_model(const Model& model, Trace& trace) {
  // input is (B,S,N)
  trace.record("input", model.input);
  Tensor mask;
  if (model.config.causal) {
    // (S,S): shared by every layer's self-attention
    mask = causal_mask(model.input.shape[1], model.input.shape[1]);
    trace.record("encoder.mask", mask);
  }
  Tensor x = model.input;
  for (std::size_t i = 0; i < model.encoder.size(); ++i)
    x = multi_head_attention(x, x, model.encoder[i].attention, model.config, mask,
                             fmt::format("encoder.{}.attention.", i), trace);
  return x;
}

}  // namespace attn
