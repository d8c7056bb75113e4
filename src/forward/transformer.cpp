// The paper's forward program (Figure 1), which runs attn's own model files: the encoder
// stack over the source, the decoder stack over the target attending to the encoder's
// output, the output head. A model file may also describe an encoder alone or a
// decoder-only (GPT-style) model (model.architecture, docs/model-file.md).
#include <optional>

#include "forward/layers.h"
#include "forward/program.h"

namespace attn {

namespace {

// The encoder stack over x (B,S,N): each layer (or an attention block alone, as the seeds'
// examples have), then its final LayerNorm when the model has one. -> (B,S,N).
Traced encoder_stack(const Model& model, Program& run, Traced x, const Traced* mask) {
  for (std::size_t i = 0; i < model.encoder.size(); ++i) {
    const EncoderLayerWeights& layer = model.encoder[i];
    const TraceScope at = run.layer(Sequence::Source, Stack::Encoder, static_cast<int>(i));
    if (layer.full)
      x = encoder_layer(x, layer, mask, model.config, at);
    else  // an attention block alone (the seeds' examples)
      x = multi_head_attention(x, x, layer.attention, mask, model.config, at.block(Block::SelfAttention));
    run.layer_done(x, Stack::Encoder);
  }
  return run.final_norm(x, model.encoder_norm, Sequence::Source, Stack::Encoder);
}

// The decoder's layers over y (B,T,N), the target or a decoder-only model's input: masked
// self-attention, cross-attention to the encoder's output (memory) when the model has an
// encoder, feed-forward; then the final norm when it has one. -> (B,T,N).
Traced decoder_stack(const Model& model, Program& run, Traced y, const Traced* memory) {
  const std::optional<Traced> self_mask = run.self_mask(y, Stack::Decoder);
  const std::optional<Traced> cross_mask = memory ? run.cross_mask(y) : std::nullopt;
  const Sequence sequence = run.decoder_sequence();
  for (std::size_t j = 0; j < model.decoder.size(); ++j) {
    const TraceScope at = run.layer(sequence, Stack::Decoder, static_cast<int>(j));
    const Traced* mask = self_mask ? &*self_mask : nullptr;
    y = model.has_target()
            ? decoder_layer(y, memory, model.decoder[j], mask, cross_mask ? &*cross_mask : nullptr, model.config, at)
            : decoder_only_layer(y, model.decoder[j], mask, model.config, at);
    run.layer_done(y, Stack::Decoder);
  }
  return run.final_norm(y, model.decoder_norm, sequence, Stack::Decoder);
}

}  // namespace

Tensor transformer_forward(const Model& model, Program& run) {
  // A decoder-only model: its decoder layers over the input X, then the output head.
  if (model.decoder_only()) {
    const Traced x = run.input(Sequence::Source);
    run.rope_frequencies();
    return run.head(decoder_stack(model, run, x, nullptr), Sequence::Source);
  }
  // 1-3. the source, the encoder's mask (causal and/or key padding) and the encoder stack;
  // a cached step reads the encoder's output from the cache instead
  std::optional<Traced> memory;
  if (!run.step()) {
    const Traced x = run.input(Sequence::Source);
    run.rope_frequencies();
    const std::optional<Traced> mask = run.self_mask(x, Stack::Encoder);
    memory = encoder_stack(model, run, x, mask ? &*mask : nullptr);
    if (!model.has_target()) return model.output.present ? run.head(*memory, Sequence::Source) : memory->value;
  }
  // 4. the decoder stack over the target, attending to the encoder's output; 5. the head
  const Traced hidden = decoder_stack(model, run, run.input(Sequence::Target), memory ? &*memory : nullptr);
  return model.output.present ? run.head(hidden, Sequence::Target) : hidden.value;
}

}  // namespace attn
