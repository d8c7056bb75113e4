// The one place that names trace entries (docs/trace-names.md): every documented name is
// made here from a StepId and the table of step kinds (attn/step_kinds.def), and every name
// a user may type (--steps, --layer) is read here. Nothing else compares trace names.
#include <cstdlib>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/trace.h"

namespace attn {

namespace {

// The rows of step_kinds.def without the printers, which are present/'s.
constexpr StepKindRow kRows[] = {
#define ATTN_STEP(kind, trace, display, page, why, forward, backward, place, alias, summary) \
  {StepKind::kind, trace, display, page, why, EntryPlace::place, alias, summary},
#include "attn/step_kinds.def"
#undef ATTN_STEP
};
static_assert(sizeof(kRows) / sizeof(kRows[0]) == kStepKindCount, "one row per step kind");

constexpr bool rows_in_order() {
  for (std::size_t i = 0; i < kStepKindCount; ++i)
    if (static_cast<std::size_t>(kRows[i].kind) != i) return false;
  return true;
}
static_assert(rows_in_order(), "the rows in StepKind's order");

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

// The last part of a weight's path: "W_q", "gamma", "W" (output.W).
const char* weight_part(WeightKind kind) {
  switch (kind) {
    case WeightKind::Embedding:
      return "embedding";
    case WeightKind::Positions:
      return "positions";
    case WeightKind::TokenTypes:
      return "token_types";
    case WeightKind::W_q:
      return "W_q";
    case WeightKind::W_k:
      return "W_k";
    case WeightKind::W_v:
      return "W_v";
// a block's optional weights: named as their row of attn/block_weights.def
#define ATTN_BLOCK_WEIGHT(name, kind, shape, needs, step, comment) \
  case WeightKind::kind:                                           \
    return #name;
#include "attn/block_weights.def"
#undef ATTN_BLOCK_WEIGHT
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
    case WeightKind::TransformB:
      return "b";
    case WeightKind::TransformW:
      return "W";
  }
  throw InternalError("parameter_name: unknown weight kind");
}

// The forward name of an entry (without "grad.").
std::string forward_name(const StepId& id);

}  // namespace

std::string parameter_name(const ParameterId& w) {
  switch (w.kind) {
    case WeightKind::Embedding:
    case WeightKind::TokenTypes:
      return weight_part(w.kind);
    case WeightKind::Positions:  // the decoder's own table: decoder_positions (BART)
      return w.stack == Stack::Decoder ? "decoder_positions" : weight_part(w.kind);
    case WeightKind::OutputW:
    case WeightKind::OutputB:
      return fmt::format("output.{}", weight_part(w.kind));
    case WeightKind::TransformW:
    case WeightKind::TransformB:
      return fmt::format("output.transform.{}", weight_part(w.kind));
    default:
      break;
  }
  // the norms outside the stacks: the embeddings' and the head transform's
  if (w.stack == Stack::None)
    return fmt::format("{}.{}", w.number == kEmbeddingNormNumber ? "embedding_norm" : "output.transform_norm",
                       weight_part(w.kind));
  if (w.layer < 0)  // a stack's final norm, or its input's (BART's encoder_embedding_norm)
    return fmt::format("{}_{}norm.{}", stack_part(w.stack), w.number == kStackEmbeddingNormNumber ? "embedding_" : "",
                       weight_part(w.kind));
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
  const StepKindRow& row = step_kind_row(id.kind);
  switch (row.place) {
    case EntryPlace::Layer:
      return fmt::format("{}.{}{}{}", layer_name(id), block_part(id.block), row.trace_name,
                         id.number > 0 ? std::to_string(id.number) : "");
    case EntryPlace::Input:
      return fmt::format("{}{}", id.sequence == Sequence::Target ? "target_" : "", row.trace_name);
    case EntryPlace::Mask: {
      const char* which = id.stack != Stack::Decoder ? "" : id.block == Block::CrossAttention ? "cross_" : "self_";
      return fmt::format("{}.{}{}", stack_part(id.stack), which, row.trace_name);
    }
    case EntryPlace::StackEnd:
      return fmt::format("{}.{}", stack_part(id.stack), row.trace_name);
    case EntryPlace::Lens:
      return fmt::format("lens.{}.{}", id.number, row.trace_name);
    case EntryPlace::Model:
    case EntryPlace::Gradient:
      break;
  }
  return row.trace_name;
}

}  // namespace

const StepKindRow& step_kind_row(StepKind kind) { return kRows[static_cast<std::size_t>(kind)]; }

const StepKindRow* step_kind_rows() { return kRows; }

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
  // The trace's own names that --steps accepts beside the pages (docs/cli.md).
  for (const StepKindRow& row : kRows)
    if (*row.steps_alias && suffix == row.steps_alias) return row.kind;
  return std::nullopt;
}

}  // namespace attn
