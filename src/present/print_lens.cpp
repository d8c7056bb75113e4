// The logit lens (--lens): after every layer of the last stack, the stack's final norm and
// the output head applied to that layer's output (lens.<l>.norm, lens.<l>.logits,
// lens.<l>.probabilities), and a table of each position's top token per layer.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "attn/experiments.h"
#include "core/top_k.h"
#include "present/experiment_report.h"
#include "present/page.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"

namespace attn {

namespace {

// The number of layers of the stack the lens reads.
int lens_layers(const StepId& id, const PrintContext& c) {
  return static_cast<int>(id.stack == Stack::Decoder ? c.model.decoder.size() : c.model.encoder.size());
}

// "LayerNorm" or "RMSNorm"; and whose weights it uses: the stack's final norm's.
std::string stack_norm_name(const PrintContext& c) {
  return root_mean_square(c.model.config.norm) ? "RMSNorm" : "LayerNorm";
}

std::string stack_norm_weights(const StepId& id) {
  return fmt::format("{}.norm", id.stack == Stack::Decoder ? "decoder" : "encoder");
}

std::string layer_output_name(const StepId& id, int layer) {
  return fmt::format("{}.{}.output", id.stack == Stack::Decoder ? "decoder" : "encoder", layer);
}

// One row per position of batch item b: its label and, per layer, the top token and its
// probability ("\"c\" 0.93"), or the token alone when `with_p` is off.
std::vector<std::vector<std::string>> lens_rows(const std::vector<const TraceEntry*>& layers, PrintContext& c,
                                                std::size_t b, bool with_p) {
  const Tensor& first = layers.front()->tensor;
  const std::size_t V = first.shape.back(), T = first.shape[first.rank() - 2];
  const Sequence sequence = layers.front()->id.sequence;
  const auto labels = c.labels(sequence, b, T);
  const std::vector<std::size_t> never = c.model.vocab.never_written_ids();
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < T; ++i) {
    std::vector<std::string> row = {fmt::format("{} {}{}", i, c.model.output.fills_in ? "" : "after ", labels[i])};
    for (const TraceEntry* layer : layers) {
      const auto top = top_tokens(layer->tensor.data.data() + (b * T + i) * V, V, 1, never);
      const std::string token = top.empty() ? "-" : "\"" + c.model.vocab.token(top[0].id) + "\"";
      row.push_back(with_p && !top.empty() ? fmt::format("{} {:.2f}", token, top[0].probability) : token);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// The rows as text, columns two spaces apart under a header; its widest line's width.
std::string table_text(const std::vector<std::vector<std::string>>& rows, std::size_t* widest) {
  std::vector<std::size_t> width(rows.front().size(), 0);
  for (const auto& r : rows)
    for (std::size_t k = 0; k < r.size(); ++k) width[k] = std::max(width[k], r[k].size());
  std::string text;
  *widest = 0;
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t k = 0; k < r.size(); ++k) line += fmt::format("{:<{}}  ", r[k], width[k]);
    line.erase(line.find_last_not_of(' ') + 1);
    *widest = std::max(*widest, line.size());
    text += line + "\n";
  }
  return text;
}

// Each position's top token after every layer: positions as rows, layers as columns.
void print_lens_table(const TraceEntry& e, PrintContext& c) {
  std::vector<const TraceEntry*> layers;
  for (int l = 0; l <= e.id.number; ++l) {
    StepId id = e.id;
    id.number = l;
    const TraceEntry* entry = c.trace.find(id);
    if (!entry) return;  // not kept (a dump-only run prints nothing)
    layers.push_back(entry);
  }
  const std::size_t b = std::min(c.cell_batch(), batch_count(e.tensor) - 1);
  std::vector<std::string> header = {""};
  for (std::size_t l = 0; l < layers.size(); ++l) header.push_back(fmt::format("layer {}", l));
  for (bool with_p : {true, false}) {
    std::vector<std::vector<std::string>> rows = lens_rows(layers, c, b, with_p);
    rows.insert(rows.begin(), header);
    std::size_t widest = 0;
    const std::string text = table_text(rows, &widest);
    if (with_p && widest + 4 > c.page.width()) continue;  // too wide with the probabilities: tokens alone
    c.page.line(fmt::format("the most probable {}token at each position{}, if the model stopped after each layer{}:",
                            c.model.output.fills_in ? "" : "next ",
                            c.item(e.tensor, b).empty() ? "" : " of batch item " + std::to_string(b),
                            with_p ? " (with its probability)" : ""));
    c.page.indented(text);
    return;
  }
}

}  // namespace

void print_lens_norm(const TraceEntry& e, PrintContext& c) {
  c.page.leave_layer();
  c.page.begin_step(page_of(e.id.kind), fmt::format("Logit lens after layer {}: the final norm", e.id.number),
                    explanation_of(e.id.kind), "lens_norm");
  c.page.formula(fmt::format("{} = {}({})   (the weights of {}: the stack's final norm, as after the last layer)",
                             display_name(e.id), stack_norm_name(c), layer_output_name(e.id, e.id.number),
                             stack_norm_weights(e.id)));
  c.page.shapes(equation(e.operands, "->", e.tensor));
  c.page.tensor(display_name(e.id), e.tensor);
}

void print_lens_transform(const TraceEntry& e, PrintContext& c) {
  // The head's transform (BERT's MLM head), as output.transform and output.transform_norm:
  // the same weights, applied to the layer's output.
  const bool norm = e.id.kind == StepKind::LensTransformNorm;
  c.page.leave_layer();
  c.page.begin_step(
      page_of(e.id.kind),
      fmt::format("Logit lens after layer {}: the head's transform{}", e.id.number, norm ? ", its LayerNorm" : ""),
      explanation_of(e.id.kind), norm ? "lens_transform_norm" : "lens_transform");
  c.page.formula(norm ? fmt::format("{} = LayerNorm({})   (the weights of output.transform_norm)", display_name(e.id),
                                    c.operand_name(e, 0))
                      : fmt::format("{} = act({} · W_t + b_t)   (the weights of output.transform)", display_name(e.id),
                                    c.operand_name(e, 0)));
  c.page.shapes(equation(e.operands, norm ? "->" : "@", e.tensor));
  c.page.tensor(display_name(e.id), e.tensor);
}

void print_lens_logits(const TraceEntry& e, PrintContext& c) {
  c.page.leave_layer();
  c.page.begin_step(page_of(e.id.kind), fmt::format("Logit lens after layer {}: logits", e.id.number),
                    explanation_of(e.id.kind), "lens_logits");
  c.page.formula(fmt::format("{} = {} · {}{}   (the output head, the same function as output.logits)",
                             display_name(e.id), c.operand_name(e, 0), c.model.output.tied ? "Eᵀ" : "W_out",
                             c.model.output.tied && c.model.output.b.has_values() ? " + b_out" : ""));
  c.page.shapes(equation(e.operands, "@", e.tensor));
  work_logit(e, c);
  if (e.id.number == lens_layers(e.id, c) - 1)
    c.page.line(fmt::format("after the last layer the lens is the model's own output: {} equals output.logits",
                            display_name(e.id)));
}

void print_lens_probabilities(const TraceEntry& e, PrintContext& c) {
  // One step, after the last layer's lens: the table of every layer's.
  if (e.id.number != lens_layers(e.id, c) - 1) return;
  c.page.leave_layer();
  c.page.begin_step(page_of(e.id.kind), "Logit lens: the top token at each position after each layer",
                    explanation_of(e.id.kind), "lens_table");
  c.page.formula("lens.<l>.probabilities = softmax(lens.<l>.logits)   (for every layer l)");
  c.page.shapes(shape_with_axes(e.tensor));
  print_lens_table(e, c);
  if (!c.options.lens_answer) return;
  // --answer: the token's place at the last position after each layer
  const std::size_t b = std::min(c.cell_batch(), batch_count(e.tensor) - 1);
  const std::string answer = readable_token(c.model, *c.options.lens_answer);
  std::string lines;
  for (const std::string& line : answer_lines(answer_by_layer(c.trace, *c.options.lens_answer, b), answer))
    lines += line + "\n";
  c.page.line(
      fmt::format("\"{}\" at the last position{}, if the model stopped after each layer (rank 1: the most "
                  "probable):",
                  answer, c.item(e.tensor, b).empty() ? "" : " of batch item " + std::to_string(b)));
  c.page.indented(lines);
}

}  // namespace attn
