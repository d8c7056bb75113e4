#include "attn/forward.h"

#include <stdexcept>

#include <fmt/format.h>

#include "attn/error.h"
#include "model/json_reader.h"
#include "steps/attention.h"
#include "steps/embedding.h"
#include "steps/feed_forward.h"
#include "steps/layer_norm.h"
#include "steps/masks.h"
#include "steps/output_head.h"
#include "steps/positional_encoding.h"
#include "steps/projection.h"
#include "steps/residual.h"
#include "steps/tokenizer.h"

namespace attn {

Tensor multi_head_attention(const Tensor& x_q, const std::string& x_q_name, const Tensor& x_kv,
                            const std::string& x_kv_name, const AttentionWeights& w, const ModelConfig& config,
                            const Tensor& mask, const std::string& mask_name, const std::string& prefix, Trace& trace) {
  // x_q is (B,S,N), x_kv is (B,T,N), W_q/W_k/W_v are (N,H*d), W_o is (H*d,N)
  const std::size_t H = config.num_heads;

  // 1. project: (B,S,N) @ (N,H*d) -> (B,S,H*d)
  const Tensor q = linear_projection(x_q, w.W_q, w.b_q, "H*d");
  trace.record(prefix + "q", q, {trace.operand(x_q_name, x_q), Operand{"W_q", w.W_q.shape, w.W_q.axes}});
  const Tensor k = linear_projection(x_kv, w.W_k, w.b_k, "H*d");
  trace.record(prefix + "k", k, {trace.operand(x_kv_name, x_kv), Operand{"W_k", w.W_k.shape, w.W_k.axes}});
  const Tensor v = linear_projection(x_kv, w.W_v, w.b_v, "H*d");
  trace.record(prefix + "v", v, {trace.operand(x_kv_name, x_kv), Operand{"W_v", w.W_v.shape, w.W_v.axes}});

  // 2. split heads: (B,S,H*d) -> (B,S,H,d) -> (B,H,S,d)
  const Tensor q_heads = split_heads(q, H);
  // copies of checked numbers (Trace::Check)
  trace.record(prefix + "q_heads", q_heads, {trace.operand(prefix + "q", q)}, Trace::Check::InputsChecked);
  const Tensor k_heads = split_heads(k, H);
  trace.record(prefix + "k_heads", k_heads, {trace.operand(prefix + "k", k)}, Trace::Check::InputsChecked);
  const Tensor v_heads = split_heads(v, H);
  trace.record(prefix + "v_heads", v_heads, {trace.operand(prefix + "v", v)}, Trace::Check::InputsChecked);

  // 3. scores: (B,H,T,d) -> (B,H,d,T); (B,H,S,d) @ (B,H,d,T) -> (B,H,S,T)
  const Tensor k_t = transpose_keys(k_heads);
  trace.record(prefix + "k_t", k_t, {trace.operand(prefix + "k_heads", k_heads)}, Trace::Check::InputsChecked);
  const Tensor scores = attention_scores(q_heads, k_t);
  trace.record(prefix + "scores", scores,
               {trace.operand(prefix + "q_heads", q_heads), trace.operand(prefix + "k_t", k_t)});
  const Tensor scaled = scale_scores(scores, config.d_head);
  // |score / √d| <= |score| for d >= 1: finite when the scores are
  trace.record(prefix + "scaled_scores", scaled, {trace.operand(prefix + "scores", scores)},
               Trace::Check::InputsChecked);

  // 4. mask (optional) and softmax over keys: (B,H,S,T) -> (B,H,S,T)
  Tensor masked;
  if (!mask.data.empty()) {
    masked = apply_mask(scaled, mask);
    trace.record(prefix + "masked_scores", masked,
                 {trace.operand(prefix + "scaled_scores", scaled), trace.operand(mask_name, mask)});
  }
  const Tensor& to_softmax = mask.data.empty() ? scaled : masked;  // not a copy of the scores
  std::size_t fully_masked = 0;
  const Tensor weights = softmax_rows(to_softmax, &fully_masked);
  // in [0, 1] whenever its inputs are finite or -inf (a masked key)
  trace.record(prefix + "weights", weights,
               {trace.operand(prefix + (mask.data.empty() ? "scaled_scores" : "masked_scores"), to_softmax)},
               Trace::Check::InputsChecked);
  if (fully_masked)
    trace.warn(prefix + "weights",
               fmt::format("{} row{} had every key masked; softmax is undefined there (0/0), so those rows get zero "
                           "weights and a zero context vector",
                           fully_masked, fully_masked == 1 ? "" : "s"));

  // 5. context: (B,H,S,T) @ (B,H,T,d) -> (B,H,S,d)
  const Tensor context = attention_context(weights, v_heads);
  trace.record(prefix + "context", context,
               {trace.operand(prefix + "weights", weights), trace.operand(prefix + "v_heads", v_heads)});

  // 6. merge heads: (B,H,S,d) -> (B,S,H,d) -> (B,S,H*d)
  const Tensor concat = merge_heads(context);
  trace.record(prefix + "concat", concat, {trace.operand(prefix + "context", context)}, Trace::Check::InputsChecked);
  if (!w.has_output_projection()) return concat;

  // 7. output projection: (B,S,H*d) @ (H*d,N) -> (B,S,N)
  const Tensor output = linear_projection(concat, w.W_o, w.b_o, "N");
  trace.record(prefix + "output", output,
               {trace.operand(prefix + "concat", concat), Operand{"W_o", w.W_o.shape, w.W_o.axes}});
  return output;
}

namespace {

// LayerNorm of x recorded as `name`.
Tensor norm_step(const Tensor& x, const std::string& x_name, const NormWeights& norm, const ModelConfig& config,
                 const std::string& name, Trace& trace) {
  // (B,S,N) -> (B,S,N)
  Tensor out = layer_norm(x, norm.gamma, norm.beta, config.layer_norm_eps);
  trace.record(name, out, {trace.operand(x_name, x)});
  return out;
}

// x + sublayer recorded as `name`.
Tensor residual_step(const Tensor& x, const std::string& x_name, const Tensor& sublayer,
                     const std::string& sublayer_name, const std::string& name, Trace& trace) {
  // (B,S,N) + (B,S,N) -> (B,S,N)
  Tensor out = residual_add(x, sublayer);
  trace.record(name, out, {trace.operand(x_name, x), trace.operand(sublayer_name, sublayer)});
  return out;
}

Tensor feed_forward_step(const Tensor& x, const std::string& x_name, const FeedForwardWeights& ffn,
                         const ModelConfig& config, const std::string& prefix, Trace& trace) {
  // (B,S,N) @ (N,F) -> (B,S,F); (B,S,F) @ (F,N) -> (B,S,N)
  const Tensor hidden = feed_forward_hidden(x, ffn.W_1, ffn.b_1, config.activation);
  trace.record(prefix + "hidden", hidden, {trace.operand(x_name, x), Operand{"W_1", ffn.W_1.shape, ffn.W_1.axes}});
  const Tensor out = feed_forward_output(hidden, ffn.W_2, ffn.b_2);
  trace.record(prefix + "output", out,
               {trace.operand(prefix + "hidden", hidden), Operand{"W_2", ffn.W_2.shape, ffn.W_2.axes}});
  return out;
}

// One full encoder layer, post-norm (the paper) or pre-norm. x_name is the input's trace name.
Tensor encoder_layer(const Tensor& x, const std::string& x_name, const EncoderLayerWeights& layer,
                     const ModelConfig& config, const Tensor& mask, const std::string& prefix, Trace& trace) {
  // x is (B,S,N) -> (B,S,N)
  const std::string p = prefix;
  if (!config.norm_first) {
    // 1. x1 = LN(x + SelfAttention(x)); 2. x2 = LN(x1 + FFN(x1))
    const Tensor a = multi_head_attention(x, x_name, x, x_name, layer.attention, config, mask, "encoder.mask",
                                          p + "attention.", trace);
    const Tensor r1 = residual_step(x, x_name, a, p + "attention.output", p + "residual1", trace);
    const Tensor x1 = norm_step(r1, p + "residual1", layer.norm1, config, p + "add_norm1", trace);
    const Tensor f = feed_forward_step(x1, p + "add_norm1", layer.ffn, config, p + "ffn.", trace);
    const Tensor r2 = residual_step(x1, p + "add_norm1", f, p + "ffn.output", p + "residual2", trace);
    const Tensor x2 = norm_step(r2, p + "residual2", layer.norm2, config, p + "add_norm2", trace);
    trace.record(p + "output", x2);
    return x2;
  }
  // 1. x1 = x + SelfAttention(LN(x)); 2. x2 = x1 + FFN(LN(x1))
  const Tensor n1 = norm_step(x, x_name, layer.norm1, config, p + "norm1", trace);
  const Tensor a = multi_head_attention(n1, p + "norm1", n1, p + "norm1", layer.attention, config, mask, "encoder.mask",
                                        p + "attention.", trace);
  const Tensor x1 = residual_step(x, x_name, a, p + "attention.output", p + "residual1", trace);
  const Tensor n2 = norm_step(x1, p + "residual1", layer.norm2, config, p + "norm2", trace);
  const Tensor f = feed_forward_step(n2, p + "norm2", layer.ffn, config, p + "ffn.", trace);
  const Tensor x2 = residual_step(x1, p + "residual1", f, p + "ffn.output", p + "residual2", trace);
  trace.record(p + "output", x2);
  return x2;
}

// One decoder layer: masked self-attention, cross-attention over the encoder's output
// (memory), feed-forward, each with its add & norm.
Tensor decoder_layer(const Tensor& y, const std::string& y_name, const Tensor& memory, const std::string& memory_name,
                     const DecoderLayerWeights& layer, const ModelConfig& config, const Tensor& self_mask,
                     const Tensor& cross_mask, const std::string& prefix, Trace& trace) {
  // y is (B,T,N), memory is (B,S,N) -> (B,T,N)
  const std::string p = prefix;
  if (!config.norm_first) {
    const Tensor sa = multi_head_attention(y, y_name, y, y_name, layer.self_attention, config, self_mask,
                                           "decoder.self_mask", p + "self_attention.", trace);
    const Tensor r1 = residual_step(y, y_name, sa, p + "self_attention.output", p + "residual1", trace);
    const Tensor y1 = norm_step(r1, p + "residual1", layer.norm1, config, p + "add_norm1", trace);
    const Tensor ca = multi_head_attention(y1, p + "add_norm1", memory, memory_name, layer.cross_attention, config,
                                           cross_mask, "decoder.cross_mask", p + "cross_attention.", trace);
    const Tensor r2 = residual_step(y1, p + "add_norm1", ca, p + "cross_attention.output", p + "residual2", trace);
    const Tensor y2 = norm_step(r2, p + "residual2", layer.norm2, config, p + "add_norm2", trace);
    const Tensor f = feed_forward_step(y2, p + "add_norm2", layer.ffn, config, p + "ffn.", trace);
    const Tensor r3 = residual_step(y2, p + "add_norm2", f, p + "ffn.output", p + "residual3", trace);
    const Tensor y3 = norm_step(r3, p + "residual3", layer.norm3, config, p + "add_norm3", trace);
    trace.record(p + "output", y3);
    return y3;
  }
  const Tensor n1 = norm_step(y, y_name, layer.norm1, config, p + "norm1", trace);
  const Tensor sa = multi_head_attention(n1, p + "norm1", n1, p + "norm1", layer.self_attention, config, self_mask,
                                         "decoder.self_mask", p + "self_attention.", trace);
  const Tensor y1 = residual_step(y, y_name, sa, p + "self_attention.output", p + "residual1", trace);
  const Tensor n2 = norm_step(y1, p + "residual1", layer.norm2, config, p + "norm2", trace);
  const Tensor ca = multi_head_attention(n2, p + "norm2", memory, memory_name, layer.cross_attention, config,
                                         cross_mask, "decoder.cross_mask", p + "cross_attention.", trace);
  const Tensor y2 = residual_step(y1, p + "residual1", ca, p + "cross_attention.output", p + "residual2", trace);
  const Tensor n3 = norm_step(y2, p + "residual2", layer.norm3, config, p + "norm3", trace);
  const Tensor f = feed_forward_step(n3, p + "norm3", layer.ffn, config, p + "ffn.", trace);
  const Tensor y3 = residual_step(y2, p + "residual2", f, p + "ffn.output", p + "residual3", trace);
  trace.record(p + "output", y3);
  return y3;
}

// Text or tokens -> ids -> embeddings + positions, recorded under `names` ("tokens",
// "embedding", "input" for the source; "target_tokens", "target_embedding", "target_input"
// for the decoder). `axis` names the sequence axis ("S" or "T"). Sets *padding to the
// (B,S) padding mask when sentences were padded.
struct SequenceNames {
  const char* which;      // "source" or "target"
  const char* tokens;     // "tokens"
  const char* embedding;  // "embedding"
  const char* input;      // "input"
  const char* axis;       // "S"
};

Tensor embed_sequence(const Model& model, const TokenInput& input, const SequenceNames& names, Tensor* padding,
                      Trace& trace) {
  // 1. tokenize: text -> tokens (a list per batch item)
  std::vector<std::vector<std::string>> batch = input.tokens;
  if (!input.texts.empty()) {
    batch.clear();
    for (const auto& text : input.texts) batch.push_back(split_tokens(text));
  }
  for (std::size_t b = 0; b < batch.size(); ++b)
    if (batch[b].empty())
      throw InputError(model.source, input.batched ? json_index(input.json_path, b) : input.json_path,
                       "expected at least one token, found none");

  // 2. look up ids: (B lists) -> (B,S), padded with <PAD>
  TokenIds ids;
  try {
    ids = lookup_token_ids(batch, model.vocab);
  } catch (const std::invalid_argument& e) {
    throw InputError(model.source, input.json_path, e.what());
  }
  ids.ids.axes = {"B", names.axis};
  trace.set_tokens(names.which, ids.tokens);
  trace.record(std::string(names.tokens) + ".ids", ids.ids);
  for (std::size_t b = 0; b < ids.unknown.size(); ++b)
    for (std::size_t s = 0; s < ids.unknown[b].size(); ++s)
      if (ids.unknown[b][s])
        trace.warn(std::string(names.tokens) + ".ids",
                   fmt::format("\"{}\" is not in the vocabulary: it becomes <UNK> (id {})", ids.tokens[b][s],
                               *model.vocab.unknown_id()));

  // 3. padding mask (B,S): 1 where <PAD> was added
  bool padded = false;
  for (std::size_t len : ids.lengths) padded = padded || len != ids.ids.shape[1];
  if (padded) {
    *padding = padding_mask(ids.ids, *model.vocab.pad_id());
    trace.record(std::string(names.tokens) + ".padding_mask", *padding);
  }

  // 4. embedding lookup: (B,S) ids into (V,N) -> (B,S,N), optionally * sqrt(N)
  Tensor x = embedding_lookup(ids.ids, model.embedding);
  trace.record(
      std::string(names.embedding) + ".lookup", x,
      {trace.operand(std::string(names.tokens) + ".ids", ids.ids), Operand{"E", model.embedding.shape, {"V", "N"}}});
  if (model.config.scale_embeddings) {
    x = scale_embedding(x);
    trace.record(std::string(names.embedding) + ".scaled", x);
  }

  // 5. positions: (S,N) added to every batch item
  const std::size_t S = x.shape[1];
  if (model.config.positional_encoding != PositionalEncoding::None) {
    Tensor pe = model.config.positional_encoding == PositionalEncoding::Sinusoidal
                    ? sinusoidal_positions(S, model.config.d_model)
                    : learned_positions(model.positions, S);
    pe.axes = {names.axis, "N"};
    trace.record(std::string(names.embedding) + ".positional", pe);
    x = add_positions(x, pe);
  }
  return x;
}

}  // namespace

Tensor run_model(const Model& model, Trace& trace) {
  const ModelConfig& config = model.config;

  // 1. the source: X as given, or tokens -> ids -> embeddings + positions, (B,S,N)
  Tensor source_padding;
  Tensor x = model.input;
  if (model.has_tokens())
    x = embed_sequence(model, model.source_tokens, {"source", "tokens", "embedding", "input", "S"}, &source_padding,
                       trace);
  trace.record("input", x);

  // 2. the encoder's mask: causal and/or key padding, additive
  const std::size_t S = x.shape[1];
  Tensor encoder_mask;
  if (config.causal || !source_padding.data.empty()) {
    encoder_mask = attention_mask(S, S, config.causal, source_padding.data.empty() ? nullptr : &source_padding);
    trace.record("encoder.mask", encoder_mask);
  }

  // 3. the encoder stack
  std::string x_name = "input";
  for (std::size_t i = 0; i < model.encoder.size(); ++i) {
    const std::string prefix = fmt::format("encoder.{}.", i);
    const EncoderLayerWeights& layer = model.encoder[i];
    if (layer.full) {
      x = encoder_layer(x, x_name, layer, config, encoder_mask, prefix, trace);
      x_name = prefix + "output";
    } else {
      x = multi_head_attention(x, x_name, x, x_name, layer.attention, config, encoder_mask, "encoder.mask",
                               prefix + "attention.", trace);
      x_name = prefix + (layer.attention.has_output_projection() ? "attention.output" : "attention.concat");
    }
  }
  if (!model.encoder_norm.gamma.data.empty()) {
    x = norm_step(x, x_name, model.encoder_norm, config, "encoder.norm", trace);
    x_name = "encoder.norm";
  }
  if (!model.has_decoder() && !model.output.present) return x;

  // 4. the decoder stack over the target, attending to the encoder's output (memory)
  Tensor hidden = x;
  std::string hidden_name = x_name;
  if (model.has_decoder()) {
    const Tensor& memory = x;
    Tensor target_padding;
    Tensor y = model.target_input;
    if (!model.target_tokens.empty())
      y = embed_sequence(model, model.target_tokens,
                         {"target", "target_tokens", "target_embedding", "target_input", "T"}, &target_padding, trace);
    y.axes[1] = "T";
    trace.record("target_input", y);
    const std::size_t T = y.shape[1];
    Tensor self_mask = attention_mask(T, T, true, target_padding.data.empty() ? nullptr : &target_padding);
    self_mask.axes[self_mask.rank() - 2] = "T";
    self_mask.axes[self_mask.rank() - 1] = "T";
    trace.record("decoder.self_mask", self_mask);
    Tensor cross_mask;
    if (!source_padding.data.empty()) {
      cross_mask = attention_mask(T, S, false, &source_padding);
      cross_mask.axes[1] = "T";
      trace.record("decoder.cross_mask", cross_mask);
    }
    std::string y_name = "target_input";
    for (std::size_t j = 0; j < model.decoder.size(); ++j) {
      const std::string prefix = fmt::format("decoder.{}.", j);
      y = decoder_layer(y, y_name, memory, x_name, model.decoder[j], config, self_mask, cross_mask, prefix, trace);
      y_name = prefix + "output";
    }
    if (!model.decoder_norm.gamma.data.empty()) {
      y = norm_step(y, y_name, model.decoder_norm, config, "decoder.norm", trace);
      y_name = "decoder.norm";
    }
    hidden = y;
    hidden_name = y_name;
  }
  if (!model.output.present) return hidden;

  // 5. the output head: (B,T,N) @ (N,V) -> (B,T,V) logits, softmax over the vocabulary
  const Tensor logits = model.output.tied ? tied_vocabulary_logits(hidden, model.embedding)
                                          : vocabulary_logits(hidden, model.output.W, model.output.b);
  trace.record("output.logits", logits,
               {trace.operand(hidden_name, hidden),
                model.output.tied ? Operand{"Eᵀ", {model.embedding.shape[1], model.embedding.shape[0]}, {"N", "V"}}
                                  : Operand{"W_out", model.output.W.shape, model.output.W.axes}});
  const Tensor probabilities = softmax_rows(logits);
  trace.record("output.probabilities", probabilities, {trace.operand("output.logits", logits)});
  return probabilities;
}

}  // namespace attn
