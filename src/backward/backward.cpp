// The whole backward pass: Figure 1 of the paper read from the top, from the loss down to
// the embeddings, each stack's layers last to first.
#include "attn/backward.h"

#include "attn/model_file.h"
#include "backward/grad_scope.h"
#include "backward/layers_backward.h"
#include "backward/weight_gradients.h"
#include "core/require.h"
#include "steps/embedding.h"
#include "steps/loss.h"
#include "steps/output_head.h"
#include "steps/positional_encoding.h"
#include "steps/residual.h"

namespace attn {

namespace {

// Records the loss, a scalar (shape []), and returns it.
double record_loss(Trace& trace, double loss) {
  Tensor t(Shape{}, AxisNames{});
  t.data[0] = loss;
  StepId id;
  id.kind = StepKind::Loss;
  trace.record(id, t);
  return loss;
}

// The output head backward from the cross-entropy of the labels: records the loss (into
// *loss too), grad.output.probabilities and grad.output.logits; returns dL/d(the head's
// input).
Tensor output_head_backward(const Model& model, const Tensor& labels, const StepId& hidden, const GradScope& at,
                            double* loss) {
  const Tensor logits = at.value(StepKind::Logits);
  const Tensor p = at.value(StepKind::Probabilities);
  const auto ignore = model.vocab.pad_id();
  *loss = record_loss(at.trace(), cross_entropy(logits, labels, ignore));
  // L = mean -log p[label]: dL/dp = -1 / (n p[label]); through the softmax, (p - onehot) / n
  at.record(StepKind::Probabilities, cross_entropy_probabilities_gradient(p, labels, ignore));
  const Tensor dlogits = cross_entropy_backward(p, labels, ignore);
  at.record(StepKind::Logits, dlogits, {at.kept(StepKind::Probabilities), at.kept_gradient(StepKind::Probabilities)});
  const Tensor x = at.value(hidden);
  if (model.output.tied)
    return tied_vocabulary_logits_backward(x, model.embedding, dlogits,
                                           at.weights().accumulator(ParameterId{WeightKind::Embedding}));
  ProjectionGradients g = vocabulary_logits_backward(x, model.output.W, !model.output.b.data.empty(), dlogits);
  at.weights().add(ParameterId{WeightKind::OutputW}, std::move(g.dW));
  if (!model.output.b.data.empty()) at.weights().add(ParameterId{WeightKind::OutputB}, std::move(g.db));
  return std::move(g.dx);
}

// The entry an encoder layer's result is recorded as: its output, or for an attention
// block alone the block's output (concat without W_o).
StepId encoder_layer_result(const Model& model, const GradScope& stack, int i) {
  const EncoderLayerWeights& layer = model.encoder[static_cast<std::size_t>(i)];
  const GradScope at = stack.layer(Stack::Encoder, i);
  if (layer.full) return at.id(StepKind::LayerOutput);
  return at.block(Block::SelfAttention)
      .id(layer.attention.has_output_projection() ? StepKind::OutputProjection : StepKind::MergedHeads);
}

// The encoder stack's result: its final norm, else its last layer's result.
StepId encoder_result(const Model& model, const GradScope& source) {
  if (!model.encoder_norm.gamma.data.empty()) return source.layer(Stack::Encoder).id(StepKind::FinalNorm);
  return encoder_layer_result(model, source, static_cast<int>(model.encoder.size()) - 1);
}

// The decoder stack's result: its final norm, else its last layer's output (`target` the
// scope of the sequence it runs over: the source in a decoder-only model).
StepId decoder_result(const Model& model, const GradScope& target) {
  if (!model.decoder_norm.gamma.data.empty()) return target.layer(Stack::Decoder).id(StepKind::FinalNorm);
  return target.layer(Stack::Decoder, static_cast<int>(model.decoder.size()) - 1).id(StepKind::LayerOutput);
}

// A decoder-only stack: d is dL/d(its result: the final norm, else the last layer's output)
// -> dL/d(its input X).
Tensor decoder_only_stack_backward(const Model& model, const GradScope& source, Tensor d) {
  const GradScope stack = source.layer(Stack::Decoder);
  const StepId mask = stack.block(Block::MaskedSelfAttention).id(StepKind::Mask);
  const int last = static_cast<int>(model.decoder.size()) - 1;
  if (!model.decoder_norm.gamma.data.empty())
    d = layer_norm_step_backward(source.layer(Stack::Decoder, last).id(StepKind::LayerOutput), model.decoder_norm,
                                 StepKind::FinalNorm, 0, model.config, stack, d);
  for (int j = last; j >= 0; --j) {
    const StepId input =
        j == 0 ? source.id(StepKind::Input) : source.layer(Stack::Decoder, j - 1).id(StepKind::LayerOutput);
    d = decoder_only_layer_backward(input, model.decoder[static_cast<std::size_t>(j)], mask, model.config,
                                    source.layer(Stack::Decoder, j), d);
  }
  return d;
}

// The mask entry of a block, when the forward recorded one.
const StepId* recorded_mask(const GradScope& at, StepId* id) {
  *id = at.id(StepKind::Mask);
  return at.trace().find(*id) ? id : nullptr;
}

// d is dL/d(the encoder stack's result) -> dL/d(its input).
Tensor encoder_stack_backward(const Model& model, const GradScope& source, Tensor d) {
  const GradScope stack = source.layer(Stack::Encoder);
  StepId mask_id;
  const StepId* mask = recorded_mask(stack.block(Block::SelfAttention), &mask_id);
  const int last = static_cast<int>(model.encoder.size()) - 1;
  if (!model.encoder_norm.gamma.data.empty())
    d = layer_norm_step_backward(encoder_layer_result(model, source, last), model.encoder_norm, StepKind::FinalNorm, 0,
                                 model.config, stack, d);
  for (int i = last; i >= 0; --i) {
    const EncoderLayerWeights& layer = model.encoder[static_cast<std::size_t>(i)];
    const StepId input = i == 0 ? source.id(StepKind::Input) : encoder_layer_result(model, source, i - 1);
    const GradScope at = source.layer(Stack::Encoder, i);
    if (layer.full) {
      d = encoder_layer_backward(input, layer, mask, model.config, at, d);
    } else {
      const AttentionInputGradients g = multi_head_attention_backward(input, input, layer.attention, mask, model.config,
                                                                      at.block(Block::SelfAttention), d);
      d = gradient_sum(g.dx_q, g.dx_kv);
    }
  }
  return d;
}

// d is dL/d(the decoder stack's result) -> dL/d(its input); dmemory gets dL/d(the encoder's
// result), which every decoder layer's cross-attention read.
Tensor decoder_stack_backward(const Model& model, const StepId& memory, const GradScope& target, Tensor d,
                              Tensor& dmemory) {
  const GradScope stack = target.layer(Stack::Decoder);
  const StepId self_mask = stack.block(Block::MaskedSelfAttention).id(StepKind::Mask);
  StepId cross_id;
  const StepId* cross_mask = recorded_mask(stack.block(Block::CrossAttention), &cross_id);
  const int last = static_cast<int>(model.decoder.size()) - 1;
  if (!model.decoder_norm.gamma.data.empty())
    d = layer_norm_step_backward(target.layer(Stack::Decoder, last).id(StepKind::LayerOutput), model.decoder_norm,
                                 StepKind::FinalNorm, 0, model.config, stack, d);
  for (int j = last; j >= 0; --j) {
    const StepId input =
        j == 0 ? target.id(StepKind::Input) : target.layer(Stack::Decoder, j - 1).id(StepKind::LayerOutput);
    d = decoder_layer_backward(input, memory, model.decoder[static_cast<std::size_t>(j)], self_mask, cross_mask,
                               model.config, target.layer(Stack::Decoder, j), d, dmemory);
  }
  return d;
}

// dinput is dL/d(a sequence's input), E[ids] (· √N) + PE: records the positions', the
// scaled and the looked-up embeddings' gradients; adds into the table's (and the learned
// positions') gradient.
void embed_sequence_backward(const Model& model, const GradScope& at, const Tensor& dinput) {
  if (model.config.positional_encoding != PositionalEncoding::None &&
      model.config.positional_encoding != PositionalEncoding::RoPE) {
    // PE (S,N) was added to every sentence: its gradient sums the batch's
    const Tensor dpe = add_positions_backward(dinput);
    at.record(StepKind::PositionalEncoding, dpe, {at.kept_gradient(StepKind::Input)});
    if (model.config.positional_encoding == PositionalEncoding::Learned)
      learned_positions_backward(dpe, at.weights().accumulator(ParameterId{WeightKind::Positions}));
  }
  Tensor d = dinput;
  if (model.config.scale_embeddings) {
    at.record(StepKind::ScaledEmbedding, d, {at.kept_gradient(StepKind::Input)});
    d = scale_embedding_backward(d);
  }
  at.record(StepKind::EmbeddingLookup, d, {at.kept_gradient(StepKind::Input)});
  embedding_lookup_backward(at.value(StepKind::TokenIds), d,
                            at.weights().accumulator(ParameterId{WeightKind::Embedding}));
}

}  // namespace

double run_backward(const Model& model, const RunInput& input, Trace& trace) {
  check_loss_defined(model, input);
  require(!trace.entries().empty(), "run_backward: the forward trace is empty (keep its entries)");
  WeightGradients weights(model);
  const StepId final_output = trace.entries().back().id;  // what run_model returned
  const GradScope source(trace, weights, Sequence::Source, &input.ablation),
      target(trace, weights, Sequence::Target, &input.ablation);
  const GradScope& rows = model.has_target() ? target : source;

  // 1. the loss and dL/d(the last stack's result)
  Tensor d;
  double loss = 0;
  if (model.output.present) {
    const StepId hidden = model.has_decoder() ? decoder_result(model, rows) : encoder_result(model, source);
    d = output_head_backward(model, input.labels, hidden, rows, &loss);
  } else {
    // L = sum(output ⊙ output_grad): dL/doutput = output_grad
    loss = record_loss(trace, output_grad_loss(rows.value(final_output), input.output_grad));
    d = input.output_grad;
  }

  // A decoder-only model: its stack, then the input's embeddings
  if (model.decoder_only()) {
    const Tensor dx = decoder_only_stack_backward(model, source, std::move(d));
    source.record(StepKind::Input, dx);
    embed_sequence_backward(model, source, dx);
    weights.record(trace);
    return loss;
  }

  // 2. the decoder stack, its input and the target's embeddings
  if (model.has_target()) {
    Tensor dmemory;
    const Tensor dy = decoder_stack_backward(model, encoder_result(model, source), target, std::move(d), dmemory);
    target.record(StepKind::Input, dy);
    if (!input.target_tokens.empty()) embed_sequence_backward(model, target, dy);
    d = std::move(dmemory);
  }

  // 3. the encoder stack, its input and the source's embeddings
  const Tensor dx = encoder_stack_backward(model, source, std::move(d));
  source.record(StepKind::Input, dx);
  if (input.has_tokens()) embed_sequence_backward(model, source, dx);

  // 4. every weight's gradient
  weights.record(trace);
  return loss;
}

}  // namespace attn
