// One run of a forward program: the inputs, masks, layer results, final norm and head an
// architecture lays its forward out with, for a full run and a cached step alike.
#include "forward/program.h"

#include <algorithm>
#include <string>
#include <utility>

#include "attn/error.h"
#include "attn/forward.h"
#include "core/shape_only.h"
#include "forward/embedding_block.h"
#include "forward/layers.h"
#include "steps/attention.h"
#include "steps/embedding.h"
#include "steps/masks.h"
#include "steps/output_head.h"
#include "steps/positional_encoding.h"

namespace attn {

namespace {

// A sequence's input X, (B,S,N), recorded as its `input`: from the token embeddings or given.
Traced sequence_input(Tensor x, bool from_tokens, const TraceScope& at) {
  Traced out = at.record(StepKind::Input, std::move(x));
  TapeEntry ran{TapeOp::Input, out.id, out.id};
  ran.from_tokens = from_tokens;
  at.tape(std::move(ran));
  return out;
}

std::size_t index_of(Sequence sequence) { return sequence == Sequence::Target ? 1 : 0; }

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

// What a tied head's logits are made from: the hidden rows and Eᵀ, and the bias b (V,) when
// the head has one (final_logits_bias).
std::vector<Operand> tied_head_operands(const Model& model, Operand hidden) {
  const std::size_t N = model.embedding.shape.empty() ? 0 : model.embedding.shape[1];
  const std::size_t V = model.embedding.shape.empty() ? 0 : model.embedding.shape[0];
  std::vector<Operand> operands = {std::move(hidden), Trace::weight("Eᵀ", {N, V}, {"N", "V"})};
  if (model.output.b.has_values()) operands.push_back(Trace::weight("b", model.output.b.shape, {"V"}));
  return operands;
}

Traced head_transform_block(const Model& model, const Traced& hidden, const TraceScope& at, bool lens, int number);

// attn patch's head (RunContext::head_ids): the logits of `ids` alone at the last position,
// as the whole head gives them. hidden (B,T,N) -> the head's transform and its norm when it
// has one (BERT's), (B,T,N) -> the last row (B,1,N) @ the head's columns of the ids (N,k),
// plus their biases (an untied head's, or a tied one's own: BERT's, final_logits_bias) ->
// (B,1,k), recorded as output.logits (no probabilities: a metric reads them).
Traced selected_logits(const Model& model, const Traced& head_input, const std::vector<std::size_t>& ids,
                       const TraceScope& at) {
  const Traced hidden =
      model.output.has_transform() ? head_transform_block(model, head_input, at, false, 0) : head_input;
  const Tensor& h = hidden.value;
  const std::size_t B = h.shape[0], T = h.shape[1], N = h.shape[2], k = ids.size();
  if (shapes_only())  // (B,1,k): no rows to gather in a run on shapes alone
    return at.record(StepKind::Logits, shape_only({B, 1, k}, {"B", h.axes[1], "V"}),
                     {at.operand(hidden), Trace::weight("W_out[:, ids]", {N, k}, {"N", "V"})});
  Tensor last = Tensor::uninitialized({B, 1, N}, {"B", h.axes[1], "N"});
  for (std::size_t b = 0; b < B; ++b)
    std::copy_n(h.data.begin() + static_cast<std::ptrdiff_t>((b * T + T - 1) * N), N,
                last.data.begin() + static_cast<std::ptrdiff_t>(b * N));
  Tensor W = Tensor::uninitialized({N, k}, {"N", "V"});
  Tensor bias;
  if (model.output.b.has_values()) bias = Tensor({k}, {"V"});
  for (std::size_t j = 0; j < k; ++j) {
    for (std::size_t n = 0; n < N; ++n)
      W.data[n * k + j] = model.output.tied ? model.embedding.at({ids[j], n}) : model.output.W.at({n, ids[j]});
    if (!bias.data.empty()) bias.data[j] = model.output.b.at({ids[j]});
  }
  return at.record(StepKind::Logits, vocabulary_logits(last, W, bias),
                   {at.operand(hidden), Trace::weight("W_out[:, ids]", W.shape, W.axes)});
}

// The stack whose layers the logit lens reads: the last one.
Stack last_stack(const Model& model) { return model.has_decoder() ? Stack::Decoder : Stack::Encoder; }

}  // namespace

Program::Program(const Model& model, const RunInput& input, Trace& trace, const RunContext& context)
    : model_(model), input_(&input), trace_(trace), context_(context) {}

Program::Program(const Model& model, std::size_t token, Trace& trace, const RunContext& context)
    : model_(model), input_(nullptr), trace_(trace), context_(context), token_(token) {}

Traced Program::input(Sequence sequence) {
  if (step()) return step_input(sequence);
  const TraceScope at = scope(sequence);
  const bool source = sequence == Sequence::Source;
  const TokenInput& tokens = source ? input_->source_tokens : input_->target_tokens;
  std::optional<Traced>* padding = &padding_[index_of(sequence)];
  if (tokens.empty()) {
    Tensor x = source ? input_->X : input_->target_X;
    // (B,S,N) or (B,T,N): a run's input always names its sequences (a caller that
    // reset the input must start the decoder again, token_input.h's start_from_bos)
    if (x.shape.size() != 3)
      throw InternalError(std::string("Program::input: no ") + (source ? "input.X" : "input.target_X") + " to run");
    if (!source) x.axes[1] = "T";
    return sequence_input(std::move(x), false, at);
  }
  Tensor x = embed_sequence(model_, tokens, at, padding);
  if (!source) x.axes[1] = "T";
  return sequence_input(std::move(x), true, at);
}

Traced Program::step_input(Sequence sequence) {
  // 1. the new token's input row: E[id] (· √N) + PE[position], (1,1,N)
  const ModelConfig& config = model_.config;
  const std::size_t position = context_.position, N = config.d_model;
  Tensor ids({1, 1}, {"B", "S"});
  ids.data[0] = static_cast<double>(token_);
  Tensor x = embedding_lookup(ids, model_.embedding);
  if (config.scale_embeddings) x = scale_embedding(x);
  // (RoPE adds nothing here: it turns the queries and keys inside each self-attention)
  if (config.positional_encoding == PositionalEncoding::Sinusoidal ||
      reads_position_table(config.positional_encoding)) {
    const Tensor all = config.positional_encoding == PositionalEncoding::Sinusoidal
                           ? sinusoidal_positions(position + 1, N)
                           : learned_positions(model_.position_table(sequence == Sequence::Target), position + 1);
    Tensor row = shapes_only() ? shape_only({1, N}, {"S", "N"}) : Tensor({1, N}, {"S", "N"});
    if (!shapes_only()) std::copy_n(all.data.begin() + static_cast<std::ptrdiff_t>(position * N), N, row.data.begin());
    x = add_positions(x, row);
  }
  return scope(sequence).record(StepKind::Input, std::move(x));
}

Traced Program::embedding_norm(const Traced& x) {
  // (B,S,N) -> (B,S,N), with the weights and eps of the model's other LayerNorms' kind
  return layer_norm_step(x, model_.embedding_norm, StepKind::EmbeddingNorm, kEmbeddingNormNumber, model_.config,
                         scope(x.id.sequence));
}

void Program::rope_frequencies() {
  const ModelConfig& config = model_.config;
  if (step() || !uses_rope(config, Block::SelfAttention) || !config.rope_scaling.llama3) return;
  scope(Sequence::Source)
      .record(StepKind::RopeFrequencies,
              attn::rope_frequencies(config.rope_dims(), config.rope_theta, config.rope_scaling));
}

std::optional<Traced> Program::self_mask(const Traced& x, Stack stack) {
  const Sequence sequence = x.id.sequence;
  const std::optional<Traced>& padding = padding_[index_of(sequence)];
  const bool causal = stack == Stack::Decoder || model_.config.causal;
  if (step() || (!causal && !padding)) return std::nullopt;
  const std::size_t S = x.value.shape[1];
  // the window of every layer is in the stack's mask; a window of some layers only, its own
  // (window_mask)
  const ModelConfig& config = model_.config;
  const std::size_t window = config.windowed_layers.empty() ? config.sliding_window : 0;
  Tensor mask = attention_mask(S, S, causal, padding ? &padding->value : nullptr, window);
  if (sequence == Sequence::Target) {
    mask.axes[mask.rank() - 2] = "T";
    mask.axes[mask.rank() - 1] = "T";
  }
  const Block block = stack == Stack::Decoder ? Block::MaskedSelfAttention : Block::SelfAttention;
  return scope(sequence).layer(stack).block(block).record(StepKind::Mask, std::move(mask));
}

std::optional<Traced> Program::window_mask(const Traced& x, Stack stack) {
  const Sequence sequence = x.id.sequence;
  const std::optional<Traced>& padding = padding_[index_of(sequence)];
  const bool causal = stack == Stack::Decoder || model_.config.causal;
  if (step() || !causal || !model_.config.sliding_window) return std::nullopt;
  const std::size_t S = x.value.shape[1];
  Tensor mask = attention_mask(S, S, true, padding ? &padding->value : nullptr, model_.config.sliding_window);
  if (sequence == Sequence::Target) {
    mask.axes[mask.rank() - 2] = "T";
    mask.axes[mask.rank() - 1] = "T";
  }
  const Block block = stack == Stack::Decoder ? Block::MaskedSelfAttention : Block::SelfAttention;
  return scope(sequence).layer(stack).block(block).record(StepKind::WindowMask, std::move(mask));
}

std::optional<Traced> Program::cross_mask(const Traced& y) {
  const std::optional<Traced>& source_padding = padding_[index_of(Sequence::Source)];
  if (step() || !source_padding) return std::nullopt;
  const std::size_t T = y.value.shape[1], S = source_padding->value.shape.back();
  Tensor padding = attention_mask(T, S, false, &source_padding->value);
  padding.axes[1] = "T";
  return scope(y.id.sequence)
      .layer(Stack::Decoder)
      .block(Block::CrossAttention)
      .record(StepKind::Mask, std::move(padding));
}

void Program::layer_done(const Traced& x, Stack stack) {
  if (!step() && input_->lens && model_.output.present && stack == last_stack(model_)) lens_.push_back(x);
}

Traced Program::final_norm(Traced x, const NormWeights& norm, Sequence sequence, Stack stack) {
  if (norm.gamma.data.empty()) return x;
  return layer_norm_step(x, norm, StepKind::FinalNorm, 0, model_.config, scope(sequence).layer(stack));
}

Tensor Program::head(const Traced& hidden, Sequence rows) {
  // the head and the lens record no ablation: a run's context matters to its blocks only
  const TraceScope at = step() ? scope(rows) : TraceScope(trace_, rows);
  if (context_.head_ids && !step()) return std::move(selected_logits(model_, hidden, *context_.head_ids, at).value);
  Tensor p = std::move(output_head(model_, hidden, at).value);
  if (!lens_.empty()) logit_lens(model_, lens_, last_stack(model_), at);
  return p;
}

namespace {

// The head's transform of hidden (B,T,N) (BERT's BertPredictionHeadTransform): act(hidden
// W_t + b_t), then its LayerNorm, (B,T,N). The model's own head records and tapes them; the
// lens's (number: its layer) records them under lens.<number>.
Traced head_transform_block(const Model& model, const Traced& hidden, const TraceScope& at, bool lens, int number) {
  const OutputWeights& o = model.output;
  const Traced dense =
      at.record(lens ? StepKind::LensTransform : StepKind::HeadTransform,
                head_transform(hidden.value, o.transform_W, o.transform_b, model.config.activation),
                {at.operand(hidden), at.weight("W_t", o.transform_W)}, Trace::Check::Values, lens ? number : 0);
  if (!lens) {
    TapeEntry ran{TapeOp::HeadTransform, dense.id, hidden.id};
    ran.output = &o;
    at.tape(std::move(ran));
  }
  return layer_norm_step(dense, o.transform_norm, lens ? StepKind::LensTransformNorm : StepKind::HeadTransformNorm,
                         lens ? number : kTransformNormNumber, model.config, at);
}

}  // namespace

Traced output_head(const Model& model, const Traced& hidden, const TraceScope& at, StepKind logits_kind, StepKind p,
                   int number) {
  const bool lens = logits_kind != StepKind::Logits;
  const Traced x = model.output.has_transform() ? head_transform_block(model, hidden, at, lens, number) : hidden;
  const Traced logits =
      model.output.tied ? at.record(logits_kind, tied_vocabulary_logits(x.value, model.embedding, model.output.b),
                                    tied_head_operands(model, at.operand(x)), Trace::Check::Values, number)
                        : at.record(logits_kind, vocabulary_logits(x.value, model.output.W, model.output.b),
                                    {at.operand(x), Trace::weight("W_out", model.output.W.shape, model.output.W.axes)},
                                    Trace::Check::Values, number);
  Traced out = at.record(p, softmax_rows(logits.value), {at.operand(logits)}, Trace::Check::Values, number);
  if (!lens) at.tape({TapeOp::Head, out.id, x.id});
  return out;
}

Tensor run_forward(const Model& model, Program& run) {
  return model.program ? model.program(model, run) : transformer_forward(model, run);
}

Tensor run_program(const Model& model, const RunInput& input, Trace& trace, const RunContext& context) {
  Program run(model, input, trace, context);
  return run_forward(model, run);
}

Tensor run_model(const Model& model, const RunInput& input, Trace& trace) {
  RunContext context;
  context.ablation = &input.ablation;
  return run_program(model, input, trace, context);
}

}  // namespace attn
