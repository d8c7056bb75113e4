// The loss, and the backward of the output head: where the backward pass starts.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/step_roles.h"
#include "present/print_limits.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"
#include "present/worked_backward.h"

namespace attn {

namespace {

// The labels' sequence: the target's positions with a decoder, else the source's.
Sequence label_sequence(const Model& model) { return model.has_target() ? Sequence::Target : Sequence::Source; }

std::size_t counted_positions(const Model& model, const Tensor& labels) {
  const auto pad = model.vocab.pad_id();
  std::size_t n = 0;
  for (double label : labels.data) n += pad && static_cast<std::size_t>(label) == *pad ? 0 : 1;
  return n;
}

// -log p(label) at each position, as worked_cross_entropy lists them.
std::vector<LossPosition> loss_positions(const Tensor& p, PrintContext& c) {
  const Model& model = c.model;
  const Tensor& labels = c.input.labels;
  const std::size_t T = labels.shape[1], V = model.vocab.size();
  const auto pad = model.vocab.pad_id();
  std::vector<LossPosition> positions;
  for (std::size_t r = 0; r < labels.size() && positions.size() < kLossPositionsShown; ++r) {
    const std::size_t b = r / T, t = r % T;
    const auto label = static_cast<std::size_t>(labels.data[r]);
    const std::string token = c.labels(label_sequence(model), b, T)[t];
    LossPosition pos;
    // (the label comes quoted already: "<BOS>")
    pos.where = fmt::format("{}position {} ({})", c.input.batched ? fmt::format("[{}] ", b) : "", t, token);
    pos.label = readable_token(model, label);
    pos.probability = p.data[r * V + label];
    pos.ignored = pad && label == *pad;
    positions.push_back(pos);
  }
  return positions;
}

}  // namespace

void print_loss(const TraceEntry& e, PrintContext& c) {
  const double loss = e.tensor.data.at(0);
  c.page.leave_layer();
  c.page.begin_step(page_of(e.id.kind), "Loss", explanation_of(e.id.kind));
  if (c.model.output.present) {
    c.page.formula(
        fmt::format("L = mean over the n = {} positions whose label is not <PAD> of -log p[label]   "
                    "(F.cross_entropy(logits, labels, ignore_index=<PAD>))",
                    counted_positions(c.model, c.input.labels)));
    c.page.shapes("labels (B,T), p (B,T,V) -> L, a scalar, shape []");
    StepId probabilities = output_probabilities_like(e.id);
    probabilities.sequence = label_sequence(c.model);
    if (const TraceEntry* p = c.trace.find(probabilities))
      c.page.worked(worked_cross_entropy(loss_positions(p->tensor, c), loss, c.worked_options()),
                    "worked, every position:");
  } else {
    c.page.formula(
        "L = Σ output ⊙ output_grad: so dL/doutput = output_grad, the model file's (PyTorch's "
        "y.backward(output_grad))");
    c.page.shapes("output and output_grad of one shape -> L, a scalar, shape []");
    Tensor g = c.input.output_grad;
    if (!c.input.batched) g = take_index(g, 0, 0);
    c.page.tensor("output_grad", g);
  }
  c.page.line("L = " + plain_number(loss, c.options.array.precision + 2));
  c.page.raw(c.page.full_text() ? "\n══ Backward pass: from L back to every weight by the chain rule, the last step "
                                  "first ══\n"
                                : "");
  c.page.explain("backward");
}

void print_probabilities_backward(const TraceEntry& e, PrintContext& c) {
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       "Softmax over the vocabulary",
                       {"dL/dp = -1 / (n · p[label]) at each position's label, 0 elsewhere (L = mean -log p[label])",
                        "dL/dlogits = p ⊙ (dL/dp - Σ dL/dp ⊙ p) = (p - onehot(label)) / n: the softmax's backward"},
                       "dL/dp"});
}

void print_logits_backward(const TraceEntry& e, PrintContext& c) {
  print_backward_text(
      e, c,
      {page_of(e.id.kind),
       "Output logits",
       {c.model.output.tied ? "dL/dx = dL/dlogits · E,  dL/dE += dL/dlogitsᵀ · x (the head's share; the lookups add "
                              "theirs)"
                            : std::string("dL/dx = dL/dlogits · W_outᵀ,  dL/dW_out = xᵀ · dL/dlogits") +
                                  (c.model.output.b.has_values() ? ",  dL/db_out = Σ dL/dlogits" : ""),
        "(each position's dL/dlogits = (p - onehot(label)) / n; 0 at a <PAD> label)"},
       "dL/dlogits"});
  StepId probabilities = output_probabilities_like(e.id);
  probabilities.gradient = false;
  const TraceEntry* p = c.trace.find(probabilities);
  const std::size_t T = c.input.labels.shape.size() == 2 ? c.input.labels.shape[1] : 0;
  const std::size_t b = c.cell_batch(), t = c.cell_row(), V = c.model.vocab.size();
  if (p && T && b < c.input.labels.shape[0] && t < T) {
    const auto label = static_cast<std::size_t>(c.input.labels.data[b * T + t]);
    const auto pad = c.model.vocab.pad_id();
    const std::vector<double> row(p->tensor.data.begin() + static_cast<std::ptrdiff_t>((b * T + t) * V),
                                  p->tensor.data.begin() + static_cast<std::ptrdiff_t>((b * T + t + 1) * V));
    if (!(pad && label == *pad))
      c.page.worked(worked_cross_entropy_gradient_row(
          row, label, readable_token(c.model, label), counted_positions(c.model, c.input.labels),
          fmt::format("dL/dlogits{}[{}]", c.input.batched ? fmt::format("[{}]", b) : "", t), c.worked_options()));
  }
  print_weight_gradients(e, c, WeightKind::OutputW);
  print_weight_gradients(e, c, WeightKind::OutputB);
}

void print_weight_gradient(const TraceEntry& e, PrintContext& c) {
  // The first weight's gradient opens the step; the others add their line to it.
  const auto& entries = c.trace.entries();
  const auto index = static_cast<std::size_t>(&e - entries.data());
  const bool first = index == 0 || index >= entries.size() || entries[index - 1].id.kind != StepKind::Weight;
  if (first) {
    c.page.leave_layer();
    c.page.begin_step(page_of(e.id.kind), "Gradients of every weight", "");
    c.page.formula(
        "dL/dW for every weight of the model file, grad.<path> in the dump: each sums the shares of "
        "every position and every sentence that used it");
  }
  double norm = 0, largest = 0;
  for (double v : e.tensor.data) {
    norm += v * v;
    largest = std::max(largest, std::fabs(v));
  }
  c.page.line(fmt::format("{:<{}} {:<{}} |g| = {:<{}} max |g| = {}", e.name, kGradientNameColumns,
                          shape_with_axes(e.tensor), kGradientShapeColumns, plain_number(std::sqrt(norm)),
                          kGradientNormColumns, plain_number(largest)));
}

}  // namespace attn
