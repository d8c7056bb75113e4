// The one place that names trace entries (docs/trace-names.md): every documented name is
// made here from a StepId, and every name a user may type (--steps, --layer) is read here.
// Nothing else compares trace names.
#include <cstdlib>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/trace.h"

namespace attn {

namespace {

// The last part of a name: "scores" in "encoder.0.attention.scores".
const char* step_part(StepKind kind) {
  switch (kind) {
    case StepKind::TokenIds:
      return "ids";
    case StepKind::PaddingMask:
      return "padding_mask";
    case StepKind::EmbeddingLookup:
      return "lookup";
    case StepKind::ScaledEmbedding:
      return "scaled";
    case StepKind::PositionalEncoding:
      return "positional";
    case StepKind::Input:
      return "input";
    case StepKind::Mask:
      return "mask";
    case StepKind::Query:
      return "q";
    case StepKind::Key:
      return "k";
    case StepKind::Value:
      return "v";
    case StepKind::QueryHeads:
      return "q_heads";
    case StepKind::KeyHeads:
      return "k_heads";
    case StepKind::ValueHeads:
      return "v_heads";
    case StepKind::RotatedQueries:
      return "q_rope";
    case StepKind::RotatedKeys:
      return "k_rope";
    case StepKind::RepeatedKeys:
      return "k_repeat";
    case StepKind::RepeatedValues:
      return "v_repeat";
    case StepKind::TransposedKeys:
      return "k_t";
    case StepKind::Scores:
      return "scores";
    case StepKind::ScaledScores:
      return "scaled_scores";
    case StepKind::MaskedScores:
      return "masked_scores";
    case StepKind::AttentionWeights:
      return "weights";
    case StepKind::Context:
      return "context";
    case StepKind::MergedHeads:
      return "concat";
    case StepKind::OutputProjection:
    case StepKind::FfnOutput:
    case StepKind::LayerOutput:
      return "output";
    case StepKind::Residual:
      return "residual";
    case StepKind::AddNorm:
      return "add_norm";
    case StepKind::PreNorm:
    case StepKind::FinalNorm:
      return "norm";
    case StepKind::FfnHidden:
      return "hidden";
    case StepKind::Logits:
      return "logits";
    case StepKind::Probabilities:
      return "probabilities";
    case StepKind::Loss:
      return "loss";
    case StepKind::Weight:
      return "weight";
  }
  throw InternalError("trace_name: unknown step kind");
}

const char* stack_part(Stack stack) { return stack == Stack::Decoder ? "decoder" : "encoder"; }

const char* block_part(Block block) {
  switch (block) {
    case Block::SelfAttention:
      return "attention.";
    case Block::MaskedSelfAttention:
      return "self_attention.";
    case Block::CrossAttention:
      return "cross_attention.";
    case Block::FeedForward:
      return "ffn.";
    case Block::None:
      break;
  }
  return "";
}

// The steps before the layers: "tokens.ids", "embedding.lookup", "input", each with
// "target_" in front for the decoder's sequence.
std::string sequence_step_name(const StepId& id) {
  const char* target = id.sequence == Sequence::Target ? "target_" : "";
  switch (id.kind) {
    case StepKind::TokenIds:
    case StepKind::PaddingMask:
      return fmt::format("{}tokens.{}", target, step_part(id.kind));
    case StepKind::EmbeddingLookup:
    case StepKind::ScaledEmbedding:
    case StepKind::PositionalEncoding:
      return fmt::format("{}embedding.{}", target, step_part(id.kind));
    default:
      return fmt::format("{}input", target);
  }
}

// The last part of a weight's path: "W_q", "gamma", "W" (output.W).
const char* weight_part(WeightKind kind) {
  switch (kind) {
    case WeightKind::Embedding:
      return "embedding";
    case WeightKind::Positions:
      return "positions";
    case WeightKind::W_q:
      return "W_q";
    case WeightKind::W_k:
      return "W_k";
    case WeightKind::W_v:
      return "W_v";
    case WeightKind::W_o:
      return "W_o";
    case WeightKind::b_q:
      return "b_q";
    case WeightKind::b_k:
      return "b_k";
    case WeightKind::b_v:
      return "b_v";
    case WeightKind::b_o:
      return "b_o";
    case WeightKind::W_1:
      return "W_1";
    case WeightKind::b_1:
      return "b_1";
    case WeightKind::W_2:
      return "W_2";
    case WeightKind::b_2:
      return "b_2";
    case WeightKind::W_3:
      return "W_3";
    case WeightKind::Gamma:
      return "gamma";
    case WeightKind::Beta:
      return "beta";
    case WeightKind::OutputW:
      return "W";
    case WeightKind::OutputB:
      return "b";
  }
  throw InternalError("parameter_name: unknown weight kind");
}

// The forward name of an entry (without "grad.").
std::string forward_name(const StepId& id);

}  // namespace

std::string parameter_name(const ParameterId& w) {
  switch (w.kind) {
    case WeightKind::Embedding:
    case WeightKind::Positions:
      return weight_part(w.kind);
    case WeightKind::OutputW:
    case WeightKind::OutputB:
      return fmt::format("output.{}", weight_part(w.kind));
    default:
      break;
  }
  if (w.layer < 0) return fmt::format("{}_norm.{}", stack_part(w.stack), weight_part(w.kind));
  const std::string layer = fmt::format("{}.{}", stack_part(w.stack), w.layer);
  if (w.block == Block::None) return fmt::format("{}.norm{}.{}", layer, w.number, weight_part(w.kind));
  const std::string block = block_part(w.block);  // "attention.", "ffn."
  if (w.head >= 0) return fmt::format("{}.{}heads.{}.{}", layer, block, w.head, weight_part(w.kind));
  return fmt::format("{}.{}{}", layer, block, weight_part(w.kind));
}

StepId gradient_of(StepId id) {
  id.gradient = true;
  return id;
}

StepId weight_gradient_id(const ParameterId& w) {
  StepId id;
  id.kind = StepKind::Weight;
  id.stack = w.stack;
  id.layer = w.layer;
  id.block = w.block;
  id.number = w.number;
  id.gradient = true;
  id.weight = w.kind;
  id.head = w.head;
  return id;
}

ParameterId parameter_of(const StepId& id) {
  return ParameterId{id.weight, id.stack, id.layer, id.block, id.number, id.head};
}

std::string layer_name(const StepId& id) {
  return id.in_layer() ? fmt::format("{}.{}", stack_part(id.stack), id.layer) : std::string();
}

std::string trace_name(const StepId& id) {
  if (id.kind == StepKind::Weight) return "grad." + parameter_name(parameter_of(id));
  return id.gradient ? "grad." + forward_name(id) : forward_name(id);
}

namespace {

std::string forward_name(const StepId& id) {
  if (id.in_layer()) {
    const bool numbered = id.kind == StepKind::Residual || id.kind == StepKind::AddNorm || id.kind == StepKind::PreNorm;
    return fmt::format("{}.{}{}{}", layer_name(id), block_part(id.block), step_part(id.kind),
                       numbered ? std::to_string(id.number) : "");
  }
  switch (id.kind) {
    case StepKind::Mask:
      if (id.stack != Stack::Decoder) return "encoder.mask";
      return id.block == Block::CrossAttention ? "decoder.cross_mask" : "decoder.self_mask";
    case StepKind::FinalNorm:
      return fmt::format("{}.norm", stack_part(id.stack));
    case StepKind::Logits:
    case StepKind::Probabilities:
      return fmt::format("output.{}", step_part(id.kind));
    case StepKind::Loss:
      return "loss";
    default:
      return sequence_step_name(id);
  }
}

}  // namespace

std::optional<LayerSelection> parse_layer_selection(const std::string& text) {
  LayerSelection selection;
  std::string index = text;
  for (Stack stack : {Stack::Encoder, Stack::Decoder}) {
    const std::string prefix = std::string(stack_part(stack)) + ".";
    if (text.compare(0, prefix.size(), prefix) == 0) {
      selection.stack = stack;
      index = text.substr(prefix.size());
    }
  }
  const bool leading_zero = index.size() > 1 && index[0] == '0';
  if (index.empty() || index.size() > 9 || leading_zero || index.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  selection.layer = std::atoi(index.c_str());
  return selection;
}

std::optional<StepKind> step_kind_of_suffix(const std::string& suffix) {
  // The trace's own names that --steps accepts beside the step kinds (docs/cli.md).
  static const StepKind kAccepted[] = {
      StepKind::TokenIds,         StepKind::EmbeddingLookup, StepKind::PositionalEncoding, StepKind::QueryHeads,
      StepKind::KeyHeads,         StepKind::ValueHeads,      StepKind::TransposedKeys,     StepKind::ScaledScores,
      StepKind::AttentionWeights, StepKind::MergedHeads,     StepKind::FfnHidden,          StepKind::AddNorm,
      StepKind::RotatedQueries,   StepKind::RotatedKeys,     StepKind::RepeatedKeys,       StepKind::RepeatedValues};
  for (StepKind kind : kAccepted)
    if (suffix == step_part(kind)) return kind;
  for (StepKind kind : {StepKind::Logits, StepKind::Probabilities})
    if (suffix == trace_name(StepId{kind})) return kind;
  return std::nullopt;
}

}  // namespace attn
