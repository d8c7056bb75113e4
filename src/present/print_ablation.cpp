// Ablation (--ablate): the context with some heads' rows replaced, and what it changed in the
// next-token probabilities, beside the same run without it.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/top_k.h"
#include "present/page.h"
#include "present/probability_text.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"
#include "present/terminal.h"

namespace attn {

namespace {

// The heads of e's block that the run ablated (RunInput::ablation).
std::vector<std::size_t> ablated_heads(const TraceEntry& e, const PrintContext& c) {
  return c.input.ablation.heads_of(e.id.stack, e.id.layer);
}

std::string head_list(const std::vector<std::size_t>& heads) {
  std::string out;
  for (std::size_t h : heads) out += (out.empty() ? "" : ", ") + std::to_string(h);
  return out;
}

// "\"c\" 0.9957", "\"␣cat\" 3.2e-05": the piece as the learner reads it, a small
// probability with its significant digits
std::string token_cell(const PrintContext& c, std::size_t id, double p) {
  return fmt::format("\"{}\" {}", readable_token(c.model, id), probability_text(p, 4));
}

}  // namespace

void print_context_ablated(const TraceEntry& e, PrintContext& c) {
  const std::vector<std::size_t> heads = ablated_heads(e, c);
  const bool mean = c.input.ablation.mean;
  const std::string which = fmt::format("head{} {}", heads.size() == 1 ? "" : "s", head_list(heads));
  c.page.begin_step(page_of(e.id.kind), "Ablated context: " + which + (mean ? " set to its mean" : " set to zero"),
                    explanation_of(e.id.kind), "context_ablated");
  c.page.formula(
      mean ? fmt::format("context_ablated[h, i, :] = mean over j of context[h, j, :]   for h in {{{}}}; "
                         "the other heads as they were",
                         head_list(heads))
           : fmt::format("context_ablated[h] = 0   for h in {{{}}}; the other heads as they were", head_list(heads)));
  c.page.shapes(equation(e.operands, "->", e.tensor));
  c.page.tensor(display_name(e.id), e.tensor);
  c.page.line(
      "everything after this step reads context_ablated instead of context: the merge, W_o, the residual "
      "and every later layer are computed again");
}

void print_ablation_comparison(const TraceEntry& e, PrintContext& c) {
  const Tensor& ablated = e.tensor;
  const Tensor& unablated = *c.options.unablated_probabilities;
  if (unablated.size() != ablated.size() || ablated.rank() < 2) return;
  const std::size_t V = ablated.shape.back(), T = ablated.shape[ablated.rank() - 2], B = ablated.size() / (V * T);
  const Sequence sequence = c.trace.tokens(Sequence::Target) ? Sequence::Target : Sequence::Source;
  const std::vector<std::size_t> never = c.model.vocab.never_written_ids();
  std::vector<std::array<std::string, 4>> rows;
  for (std::size_t b = 0; b < B; ++b) {
    if (c.options.filter.batch && b != *c.options.filter.batch) continue;
    const auto labels = c.labels(sequence, b, T);
    for (std::size_t i = 0; i < T; ++i) {
      const std::size_t row = (b * T + i) * V;
      const auto before = top_tokens(unablated.data.data() + row, V, 1, never);
      const auto after = top_tokens(ablated.data.data() + row, V, 1, never);
      if (before.empty() || after.empty()) continue;
      rows.push_back({fmt::format("{}{} after {}", c.item(ablated, b), i, labels[i]),
                      token_cell(c, before[0].id, before[0].probability),
                      probability_text(ablated.data[row + before[0].id], 4),
                      token_cell(c, after[0].id, after[0].probability)});
    }
  }
  std::array<std::string, 4> header = {"", "unablated", "ablated p", "ablated pick"};
  std::array<std::size_t, 4> width{};
  for (std::size_t k = 0; k < 4; ++k) {
    width[k] = header[k].size();
    for (const auto& r : rows) width[k] = std::max(width[k], display_width(r[k]));
  }
  std::string text;
  const auto add_line = [&](const std::array<std::string, 4>& r) {
    std::string line;
    for (std::size_t k = 0; k < 4; ++k) line += r[k] + std::string(width[k] - display_width(r[k]) + 2, ' ');
    line.erase(line.find_last_not_of(' ') + 1);
    text += line + "\n";
  };
  add_line(header);
  for (const auto& r : rows) add_line(r);
  c.page.line(
      fmt::format("without and with the ablation ({}): the unablated run's pick, its probability with the "
                  "ablation, and the ablated run's own pick:",
                  c.options.ablation_label));
  c.page.indented(text);
}

}  // namespace attn
