// The output head: logits over the vocabulary and the next-token probabilities.
#include <fmt/format.h>

#include "core/top_k.h"
#include "present/step_printers.h"

namespace attn {

void print_logits(const TraceEntry& e, PrintContext& c) {
  c.page.leave_layer();
  c.page.begin_step("logits", "Output logits", "output_softmax");
  c.page.formula(c.model.output.tied
                     ? "logits = x · Eᵀ: one score per vocabulary token (the embedding table, transposed)"
                     : "logits = x · W_out + b_out: one score per vocabulary token");
  c.page.shapes(equation(e.operands, "@", e.tensor));
  c.page.tensor("logits", e.tensor);
}

void print_probabilities(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  c.page.begin_step("probabilities", "Softmax over the vocabulary", "output_softmax");
  c.page.formula("p = softmax(logits): the probability of each token being the next one; each row sums to 1");
  c.page.shapes(shape_with_axes(t));
  c.page.tensor("p", t);
  const std::size_t V = t.shape.back();
  const std::size_t rows = t.size() / V;
  const std::size_t len = t.rank() >= 2 ? t.shape[t.rank() - 2] : 1;
  const auto* tokens = c.trace.tokens(c.trace.tokens(Sequence::Target) ? Sequence::Target : Sequence::Source);
  std::string greedy;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::size_t b = r / len, pos = r % len;
    if (c.options.filter.batch && b != *c.options.filter.batch) continue;
    const auto top = top_tokens(t.data.data() + r * V, V, 5);
    const std::string after = tokens && b < tokens->size() && pos < (*tokens)[b].size() ? (*tokens)[b][pos] : "";
    std::string row;
    for (const auto& tp : top)
      row += fmt::format("{}\"{}\" {}", row.empty() ? "" : ",  ", c.model.vocab.token(tp.id),
                         plain_number(tp.probability, 4));
    c.page.line(fmt::format("{}after \"{}\" (position {}): top 5: {}", rows > len ? fmt::format("[{}] ", b) : "", after,
                            pos, row));
    greedy += (greedy.empty() ? "" : " ") + c.model.vocab.token(top[0].id);
  }
  c.page.line("greedy pick (the most probable token at each position): " + greedy);
}

}  // namespace attn
