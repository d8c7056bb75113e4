// The steps before the layers: tokens, ids, embeddings, positions, the input, the masks.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "present/array_format.h"
#include "present/step_printers.h"

namespace attn {

namespace {
bool is_target(const TraceEntry& e) { return e.id.sequence == Sequence::Target; }
}  // namespace

void print_token_ids(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  c.page.leave_layer();
  c.page.begin_step("tokens", is_target(e) ? "Target tokens and ids (the decoder's input)" : "Tokens and ids",
                    "tokenize");
  c.page.formula("split on whitespace, punctuation on its own; each token's id is its row in the vocabulary");
  if (const auto* tokens = c.trace.tokens(e.id.sequence)) {
    for (std::size_t b = 0; b < tokens->size(); ++b) {
      std::string row = c.trace.drops_batch_axis() ? "" : fmt::format("[{}] ", b);
      for (std::size_t s = 0; s < (*tokens)[b].size(); ++s)
        row += fmt::format("{}\"{}\"→{}", s ? "  " : "", (*tokens)[b][s],
                           static_cast<long long>(t.data[b * (*tokens)[b].size() + s]));
      c.page.line(row);
    }
  }
  c.page.shapes(shape_with_axes(t));
  c.page.tensor("ids", t, true);
}

void print_padding_mask(const TraceEntry& e, PrintContext& c) {
  c.page.begin_step("padding_mask", is_target(e) ? "Target padding mask" : "Padding mask", "padding_mask");
  c.page.formula("1 where a sentence was padded with <PAD> to the batch's longest; those keys get -inf below");
  c.page.shapes(shape_with_axes(e.tensor));
  c.page.tensor("padding", e.tensor, true);
}

void print_embedding_lookup(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  c.page.begin_step("embedding", is_target(e) ? "Target embedding lookup" : "Embedding lookup", "embedding");
  c.page.formula(
      "x = E[ids]: row ids[s] of the embedding table E, the same as one_hot(ids) @ E without the multiplications");
  if (e.operands.size() == 2)
    c.page.shapes(fmt::format("{} ids into E {} -> {}", shape_with_axes(e.operands[0].shape, e.operands[0].axes),
                              shape_with_axes(e.operands[1].shape, e.operands[1].axes), shape_with_axes(t)));
  if (const auto* tokens = c.trace.tokens(e.id.sequence)) {
    // The rows of the first sentence, each with the token it is the embedding of.
    const std::size_t N = c.model.config.d_model;
    const std::size_t shown = std::min<std::size_t>((*tokens)[0].size(), 8);
    for (std::size_t s = 0; s < shown; ++s) {
      const auto id = c.model.vocab.find((*tokens)[0][s]);
      Tensor row({N}, {"N"});
      std::copy(t.data.begin() + static_cast<std::ptrdiff_t>(s * N),
                t.data.begin() + static_cast<std::ptrdiff_t>((s + 1) * N), row.data.begin());
      c.page.line(fmt::format("E[{}] (\"{}\") = {}", id ? std::to_string(*id) : "<UNK>", (*tokens)[0][s],
                              format_array(row, c.options.array)));
    }
  }
  c.page.tensor("x", t);
}

void print_scaled_embedding(const TraceEntry& e, PrintContext& c) {
  const std::size_t N = c.model.config.d_model;
  c.page.begin_step("scale_embedding", "Scale the embeddings", "embedding");
  c.page.formula(fmt::format("x = x · √d_model = x · √{} = x · {}", N, plain_number(std::sqrt(double(N)))));
  c.page.shapes(shape_with_axes(e.tensor) + " · scalar -> " + shape_with_axes(e.tensor));
  c.page.tensor("x", e.tensor);
}

void print_positional_encoding(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const bool sinusoidal = c.model.config.positional_encoding == PositionalEncoding::Sinusoidal;
  if (!sinusoidal) {
    c.page.begin_step("positions", "Learned positions", "positional_encoding");
    c.page.formula("PE = P[0:S]: the first S rows of the learned position table");
  } else {
    c.page.begin_step("positions", "Sinusoidal positional encoding", "positional_encoding");
    c.page.formula("PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))");
  }
  c.page.shapes(shape_with_axes(t) + ", the same rows for every sentence in the batch");
  c.page.tensor("PE", t);
  if (!sinusoidal || t.rank() != 2) return;
  // Default: PE(1, 2), the element seed 004 works out; --cell i,j picks (pos, dim).
  const std::size_t pos = c.options.cell_given ? c.options.cell[2] : std::min<std::size_t>(1, t.shape[0] - 1);
  const std::size_t dim = c.options.cell_given ? c.options.cell[3] : std::min<std::size_t>(2, t.shape[1] - 1);
  if (pos < t.shape[0] && dim < t.shape[1])
    c.page.worked(worked_positional_encoding(pos, dim, c.model.config.d_model, c.worked_options()));
}

void print_input(const TraceEntry& e, PrintContext& c) {
  const bool target = is_target(e);
  StepId lookup = e.id;
  lookup.kind = StepKind::EmbeddingLookup;
  const bool from_tokens = c.trace.find(lookup) != nullptr;
  c.page.leave_layer();
  c.page.begin_step("input", target ? "Decoder input" : "Input X", "input");
  if (from_tokens && c.model.config.positional_encoding != PositionalEncoding::None)
    c.page.formula(target ? "Y = E[target ids] + PE: the decoder's input"
                          : "X = E[ids] + PE: each token's embedding plus its position");
  else if (from_tokens)
    c.page.formula("X = E[ids] (no positional encoding)");
  else
    c.page.formula("X: one row of d_model numbers per position, as given");
  c.page.shapes(shape_with_axes(e.tensor));
  c.page.tensor(target ? "Y" : "X", e.tensor);
}

// The additive masks: shown in boolean form (which keys are hidden) and as added to the
// scores.
void print_mask(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const bool encoder = e.id.stack == Stack::Encoder;
  const bool cross = e.id.block == Block::CrossAttention;
  const bool self = !encoder && !cross;
  const bool causal = self || (encoder && c.model.config.causal);
  const char* why = causal ? "causal_mask" : "padding_mask";
  c.page.leave_layer();
  if (cross)
    c.page.begin_step("mask", "Cross-attention mask (source padding)", why);
  else if (self)
    c.page.begin_step("mask", "Decoder self-attention mask (causal)", why);
  else
    c.page.begin_step("mask", c.model.config.causal ? "Causal mask" : "Padding mask for self-attention", why);
  if (causal) c.page.formula("position i may attend to positions j <= i: nothing from the future");
  if (t.rank() == 3 || cross) c.page.formula("padded keys (<PAD>) are hidden from every query");
  Tensor hidden = t;
  for (double& v : hidden.data) v = std::isinf(v) ? 1.0 : 0.0;
  c.page.shapes(shape_with_axes(t));
  c.page.line("1 = hidden:");
  c.page.tensor("hidden", hidden, true);
  c.page.line("added to the scores (0 keeps a score, -inf removes it):");
  c.page.tensor("mask", t);
}

}  // namespace attn
