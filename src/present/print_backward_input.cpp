// The steps before the layers, backward: the input, the positions, the embeddings.
#include <cmath>

#include <fmt/format.h>

#include "present/step_printers.h"

namespace attn {

namespace {
bool from_tokens(const TraceEntry& e, PrintContext& c) {
  return c.forward_sibling(e.id, StepKind::EmbeddingLookup) != nullptr;
}
}  // namespace

void print_input_backward(const TraceEntry& e, PrintContext& c) {
  const bool target = e.id.sequence == Sequence::Target;
  const std::string x = target ? "Y" : "X";
  c.page.leave_layer();
  std::vector<std::string> formulas = {
      fmt::format("dL/d{}: the sum over every path from {}: the first layer's Q, K and V projections (and its "
                  "residual, in a full layer)",
                  x, x)};
  if (from_tokens(e, c))
    formulas.push_back(fmt::format("{} = E[ids]{} + PE:  dL/d(E[ids]{}) = dL/d{},  dL/dPE = Σ_b dL/d{}[b]", x,
                                   c.model.config.scale_embeddings ? "·√d_model" : "",
                                   c.model.config.scale_embeddings ? "·√d_model" : "", x, x));
  print_backward_text(e, c, {page_of(e.id.kind), target ? "Decoder input" : "Input X", formulas, "dL/d" + x});
}

void print_positions_backward(const TraceEntry& e, PrintContext& c) {
  const bool learned = c.model.config.positional_encoding == PositionalEncoding::Learned;
  const bool table = c.model.config.positional_encoding == PositionalEncoding::SinusoidalTable;
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       learned ? "Learned positions"
                       : table ? "Sinusoidal positions, from the model's table"
                               : "Sinusoidal positional encoding",
                       {learned ? "PE = P[0:S]:  dL/dP[0:S] += dL/dPE; the table's rows past S get nothing"
                                : "the sinusoids are fixed, nothing to learn: dL/dPE only says how L would change "
                                  "with them"},
                       "dL/dPE"});
  if (learned && e.id.sequence == Sequence::Source) print_weight_gradients(e, c, WeightKind::Positions);
}

void print_embedding_backward(const TraceEntry& e, PrintContext& c) {
  if (e.id.kind == StepKind::ScaledEmbedding) {
    const std::size_t N = c.model.config.d_model;
    print_backward_text(
        e, c,
        {page_of(e.id.kind),
         "Scale the embeddings",
         {fmt::format("x · √d_model:  dL/dE[ids] = dL/dx · √{} = dL/dx · {}", N, plain_number(std::sqrt(double(N))))},
         "dL/dx"});
    return;
  }
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       e.id.sequence == Sequence::Target ? "Target embedding lookup" : "Embedding lookup",
                       {"x = E[ids]:  dL/dE[id] += dL/dx[b][s] for every position holding that id (a scatter-add: "
                        "a token used twice gets both gradients)",
                        c.model.output.tied ? "(the tied output head adds its own share, dL/dlogitsᵀ · x, to the "
                                              "same table)"
                                            : "(rows of tokens the input does not use get 0)"},
                       "dL/dE[ids]"});
  // The table's gradient is whole after the source's lookup, the last one.
  if (e.id.sequence == Sequence::Source) print_weight_gradients(e, c, WeightKind::Embedding);
}

}  // namespace attn
