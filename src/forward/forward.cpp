// The whole model, as the paper's Figure 1 draws it: the encoder stack over the source,
// the decoder stack over the target, the output head.
#include "attn/forward.h"

#include <optional>
#include <vector>

#include "forward/embedding_block.h"
#include "forward/layers.h"
#include "steps/attention.h"
#include "steps/masks.h"
#include "steps/output_head.h"
#include "steps/positional_encoding.h"

namespace attn {

namespace {

// The source's input X, (B,S,N): given as numbers, or made from tokens. Sets *padding when
// sentences were padded.
Traced source_input(const Model& model, const RunInput& input, const TraceScope& at, std::optional<Traced>* padding) {
  Tensor x = input.has_tokens() ? embed_sequence(model, input.source_tokens, at, padding) : input.X;
  return at.record(StepKind::Input, std::move(x));
}

// The encoder stack: its layers, then its final LayerNorm when the model has one.
// x is (B,S,N) -> (B,S,N).
// `outputs` (the logit lens, else nullptr) gets each layer's output.
Traced encoder_stack(const Model& model, Traced x, const Traced* mask, const TraceScope& at,
                     std::vector<Traced>* outputs) {
  for (std::size_t i = 0; i < model.encoder.size(); ++i) {
    const EncoderLayerWeights& layer = model.encoder[i];
    const TraceScope layer_scope = at.layer(Stack::Encoder, static_cast<int>(i));
    if (layer.full)
      x = encoder_layer(x, layer, mask, model.config, layer_scope);
    else  // an attention block alone (the seeds' examples)
      x = multi_head_attention(x, x, layer.attention, mask, model.config, layer_scope.block(Block::SelfAttention));
    if (outputs) outputs->push_back(x);
  }
  if (model.encoder_norm.gamma.data.empty()) return x;
  return layer_norm_step(x, model.encoder_norm, StepKind::FinalNorm, 0, model.config, at.layer(Stack::Encoder));
}

// The decoder stack over the target, attending to the encoder's output (memory), then its
// final LayerNorm when the model has one. memory is (B,S,N) -> (B,T,N).
Traced decoder_stack(const Model& model, const RunInput& input, const Traced& memory,
                     const std::optional<Traced>& source_padding, const TraceScope& at, std::vector<Traced>* outputs) {
  std::optional<Traced> target_padding;
  Tensor y =
      input.target_tokens.empty() ? input.target_X : embed_sequence(model, input.target_tokens, at, &target_padding);
  y.axes[1] = "T";
  Traced x = at.record(StepKind::Input, std::move(y));

  // Masks: causal (and target padding) for self-attention, source padding for cross-attention.
  const TraceScope stack = at.layer(Stack::Decoder);
  const std::size_t T = x.value.shape[1], S = memory.value.shape[1];
  Tensor causal =
      attention_mask(T, T, true, target_padding ? &target_padding->value : nullptr, model.config.sliding_window);
  causal.axes[causal.rank() - 2] = "T";
  causal.axes[causal.rank() - 1] = "T";
  const Traced self_mask = stack.block(Block::MaskedSelfAttention).record(StepKind::Mask, std::move(causal));
  std::optional<Traced> cross_mask;
  if (source_padding) {
    Tensor padding = attention_mask(T, S, false, &source_padding->value);
    padding.axes[1] = "T";
    cross_mask = stack.block(Block::CrossAttention).record(StepKind::Mask, std::move(padding));
  }

  for (std::size_t j = 0; j < model.decoder.size(); ++j) {
    x = decoder_layer(x, memory, model.decoder[j], self_mask, cross_mask ? &*cross_mask : nullptr, model.config,
                      at.layer(Stack::Decoder, static_cast<int>(j)));
    if (outputs) outputs->push_back(x);
  }
  if (model.decoder_norm.gamma.data.empty()) return x;
  return layer_norm_step(x, model.decoder_norm, StepKind::FinalNorm, 0, model.config, stack);
}

// A decoder-only (GPT-style) stack over the input x (B,S,N): the causal mask (with the
// padding's, and the sliding window's when the model has one), the layers, the final
// LayerNorm when the model has one. -> (B,S,N).
Traced decoder_only_stack(const Model& model, Traced x, const std::optional<Traced>& padding, const TraceScope& source,
                          std::vector<Traced>* outputs) {
  const TraceScope stack = source.layer(Stack::Decoder);
  const std::size_t S = x.value.shape[1];
  const Traced mask = stack.block(Block::MaskedSelfAttention)
                          .record(StepKind::Mask, attention_mask(S, S, true, padding ? &padding->value : nullptr,
                                                                 model.config.sliding_window));
  for (std::size_t j = 0; j < model.decoder.size(); ++j) {
    x = decoder_only_layer(x, model.decoder[j], mask, model.config, source.layer(Stack::Decoder, static_cast<int>(j)));
    if (outputs) outputs->push_back(x);
  }
  if (model.decoder_norm.gamma.data.empty()) return x;
  return layer_norm_step(x, model.decoder_norm, StepKind::FinalNorm, 0, model.config, stack);
}

// The output head: (B,T,N) @ (N,V) -> (B,T,V) logits, softmax over the vocabulary; recorded
// as output.logits and output.probabilities, or as the logit lens's (`logits`, `p`, number).
Traced output_head(const Model& model, const Traced& hidden, const TraceScope& at,
                   StepKind logits_kind = StepKind::Logits, StepKind p = StepKind::Probabilities, int number = 0) {
  const std::size_t N = model.embedding.shape.empty() ? 0 : model.embedding.shape[1];
  const std::size_t V = model.embedding.shape.empty() ? 0 : model.embedding.shape[0];
  const Traced logits =
      model.output.tied
          ? at.record(logits_kind, tied_vocabulary_logits(hidden.value, model.embedding),
                      {at.operand(hidden), Trace::weight("Eᵀ", {N, V}, {"N", "V"})}, Trace::Check::Values, number)
          : at.record(logits_kind, vocabulary_logits(hidden.value, model.output.W, model.output.b),
                      {at.operand(hidden), Trace::weight("W_out", model.output.W.shape, model.output.W.axes)},
                      Trace::Check::Values, number);
  return at.record(p, softmax_rows(logits.value), {at.operand(logits)}, Trace::Check::Values, number);
}

// The logit lens: each layer's output (B,T,N) through the stack's final norm (when it has
// one) and the output head, with the same step functions as the model's own output, so that
// the last layer's lens is output.logits bit for bit. Recorded as lens.<l>.norm, .logits,
// .probabilities, after the output head.
void logit_lens(const Model& model, const std::vector<Traced>& outputs, Stack stack, const TraceScope& rows) {
  const NormWeights& norm = stack == Stack::Decoder ? model.decoder_norm : model.encoder_norm;
  const TraceScope at = rows.layer(stack);
  for (std::size_t l = 0; l < outputs.size(); ++l) {
    const int layer = static_cast<int>(l);
    if (norm.gamma.data.empty()) {
      output_head(model, outputs[l], at, StepKind::LensLogits, StepKind::LensProbabilities, layer);
      continue;
    }
    const Traced normed = layer_norm_step(outputs[l], norm, StepKind::LensNorm, layer, model.config, at);
    output_head(model, normed, at, StepKind::LensLogits, StepKind::LensProbabilities, layer);
  }
}

}  // namespace

Tensor run_model(const Model& model, const RunInput& input, Trace& trace) {
  const ModelConfig& config = model.config;
  const TraceScope source(trace, Sequence::Source, &input.ablation);
  // The logit lens reads each layer's output of the last stack (and only with an output head).
  std::vector<Traced> layer_outputs;
  std::vector<Traced>* lens = input.lens && model.output.present ? &layer_outputs : nullptr;

  // 1. the source: X as given, or tokens -> ids -> embeddings + positions, (B,S,N)
  std::optional<Traced> source_padding;
  const Traced x = source_input(model, input, source, &source_padding);
  // 1b. Llama 3.1's RoPE frequencies (rope_scaling "llama3"), once for every block: (d/2,)
  if (uses_rope(config, Block::SelfAttention) && config.rope_scaling.llama3)
    source.record(StepKind::RopeFrequencies, rope_frequencies(config.d_head, config.rope_theta, config.rope_scaling));

  // A decoder-only model: its decoder layers over X, then the output head (and the lens).
  if (model.decoder_only()) {
    Tensor p = std::move(output_head(model, decoder_only_stack(model, x, source_padding, source, lens), source).value);
    if (lens) logit_lens(model, layer_outputs, Stack::Decoder, source);
    return p;
  }

  // 2. the encoder's mask: causal and/or key padding, additive
  std::optional<Traced> encoder_mask;
  if (config.causal || source_padding) {
    const std::size_t S = x.value.shape[1];
    encoder_mask = source.layer(Stack::Encoder)
                       .block(Block::SelfAttention)
                       .record(StepKind::Mask,
                               attention_mask(S, S, config.causal, source_padding ? &source_padding->value : nullptr,
                                              config.sliding_window));
  }

  // 3. the encoder stack (its layers' outputs for the lens when no decoder follows)
  Traced hidden =
      encoder_stack(model, x, encoder_mask ? &*encoder_mask : nullptr, source, model.has_target() ? nullptr : lens);
  if (!model.has_target() && !model.output.present) return std::move(hidden.value);

  // 4. the decoder stack over the target, attending to the encoder's output
  if (model.has_target())
    hidden =
        decoder_stack(model, input, hidden, source_padding, TraceScope(trace, Sequence::Target, &input.ablation), lens);
  if (!model.output.present) return std::move(hidden.value);

  // 5. the output head, then the lens
  const TraceScope rows(trace, model.has_target() ? Sequence::Target : Sequence::Source);
  Tensor p = std::move(output_head(model, hidden, rows).value);
  if (lens) logit_lens(model, layer_outputs, model.has_target() ? Stack::Decoder : Stack::Encoder, rows);
  return p;
}

}  // namespace attn
