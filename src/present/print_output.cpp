// The output head: logits over the vocabulary and the next-token probabilities. A row of
// either has one number per vocabulary entry (thousands, in a real model): the walkthrough
// shows the largest few of each row as a labelled table, the whole tensor with --full.
#include <fmt/format.h>

#include "core/top_k.h"
#include "present/page.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"

namespace attn {

namespace {

// The rows of a (B?,T,V) tensor that --batch leaves, each labelled by the token it comes
// after: position i predicts the token at i+1.
struct VocabularyRows {
  std::vector<std::size_t> rows;  // indices into the flattened (B*T, V) rows
  std::vector<std::string> labels;
};

// Whether position `pos` of sentence b holds a mask token, the one a masked-LM head fills in.
bool is_mask_position(const PrintContext& c, Sequence sequence, std::size_t b, std::size_t pos) {
  const auto* tokens = c.trace.tokens(sequence);
  return tokens && b < tokens->size() && pos < (*tokens)[b].size() && is_mask_token(c.model, (*tokens)[b][pos]);
}

// A masked-LM head's rows score their own position (`fills_in`): labelled "3 \"[MASK]\":",
// and only the rows at a mask token when `masks_only`.
VocabularyRows vocabulary_rows(const Tensor& t, PrintContext& c, Sequence sequence, bool masks_only = false) {
  VocabularyRows out;
  const std::size_t len = t.rank() >= 2 ? t.shape[t.rank() - 2] : 1;
  const std::size_t B = batch_count(t);
  const bool fills_in = c.model.output.fills_in;
  for (std::size_t b = 0; b < B; ++b) {
    if (c.options.filter.batch && b != *c.options.filter.batch) continue;
    const auto labels = c.labels(sequence, b, len);
    for (std::size_t pos = 0; pos < len; ++pos) {
      if (masks_only && !is_mask_position(c, sequence, b, pos)) continue;
      out.rows.push_back(b * len + pos);
      out.labels.push_back(fmt::format("{}{} {}{}:", c.item(t, b), pos, fills_in ? "" : "after ", labels[pos]));
    }
  }
  return out;
}

Sequence output_sequence(const PrintContext& c) {
  return c.trace.tokens(Sequence::Target) ? Sequence::Target : Sequence::Source;
}

// The largest k of each row (each mask position's, when `masks_only`), leaving out
// `excluded` ids.
TopKView top_view(const Tensor& t, PrintContext& c, const std::vector<std::size_t>& excluded, int decimals,
                  bool masks_only = false) {
  const std::size_t V = t.shape.back();
  const VocabularyRows rows = vocabulary_rows(t, c, output_sequence(c), masks_only);
  TopKView view;
  view.row_labels = rows.labels;
  view.decimals = decimals;
  for (std::size_t r : rows.rows) {
    std::vector<std::pair<std::string, double>> row;
    for (const auto& tp : top_tokens(t.data.data() + r * V, V, c.options.top_k, excluded))
      row.emplace_back("\"" + readable_token(c.model, tp.id) + "\"", tp.probability);
    view.rows.push_back(std::move(row));
  }
  return view;
}

}  // namespace

void print_head_transform(const TraceEntry& e, PrintContext& c) {
  const OutputWeights& o = c.model.output;
  const Activation act = c.model.config.activation;
  const char* name = act == Activation::ReLU ? "ReLU" : act == Activation::GELUTanh ? "GELU_tanh" : "GELU";
  c.page.leave_layer();
  c.page.begin_step(page_of(e.id.kind), "The masked-LM head's transform", explanation_of(e.id.kind));
  c.page.formula(fmt::format("transform = {}({} · W_t + b_t)   (one more d_model x d_model layer; its LayerNorm next)",
                             name, c.operand_name(e, 0)));
  c.page.shapes(equation(e.operands, "@", e.tensor));
  c.page.weight("W_t", o.transform_W);
  c.page.weight("b_t", o.transform_b);
  const TraceEntry* input = c.operand_entry(e, 0);
  if (input && c.page.detailed()) {
    const std::size_t b = std::min(c.cell_batch(), batch_count(input->tensor) - 1);
    const Tensor x = batch_item(input->tensor, b);
    const std::size_t i = c.cell_row(), j = c.cell_column();
    if (i < x.shape[0] && j < o.transform_W.shape[1]) {
      double z = 0;  // the sum as the product computes it: x · W_t first, then + b_t
      for (std::size_t k = 0; k < x.shape[1]; ++k) z += x.data[i * x.shape[1] + k] * o.transform_W.at({k, j});
      z += o.transform_b.data[j];
      const std::string index = fmt::format("{}[{}][{}]", c.item(e.tensor, b), i, j);
      c.page.worked(worked_projection_cell(x, o.transform_W, o.transform_b, i, j, "z" + c.item(e.tensor, b),
                                           display_name(input->id) + c.item(input->tensor, b), "W_t", "b_t",
                                           c.worked_options()) +
                    worked_activation(z, act, "transform" + index, "z" + index, c.worked_options()));
    }
  }
  c.page.tensor(display_name(e.id), e.tensor);
}

void print_head_transform_backward(const TraceEntry& e, PrintContext& c) {
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       "The masked-LM head's transform",
                       {"transform = act(z), z = x · W_t + b_t:  dL/dz = dL/dtransform ⊙ act'(z)",
                        "dL/dx = dL/dz · W_tᵀ,  dL/dW_t = Σ xᵀ · dL/dz,  dL/db_t = Σ dL/dz, over every position"},
                       "dL/dtransform"});
  print_weight_gradients(e, c, WeightKind::TransformW);
  print_weight_gradients(e, c, WeightKind::TransformB);
}

void work_logit(const TraceEntry& e, PrintContext& c) {
  const TraceEntry* input = c.operand_entry(e, 0);
  if (!input || !c.page.detailed()) return;
  const std::size_t V = e.tensor.shape.back(), N = c.model.config.d_model;
  const std::size_t b = std::min(c.cell_batch(), batch_count(e.tensor) - 1), i = c.cell_row();
  const Tensor x = batch_item(input->tensor, b);
  if (i >= x.shape[0]) return;
  const std::size_t row = b * x.shape[0] + i;
  const auto top = top_tokens(e.tensor.data.data() + row * V, V, 1, c.model.vocab.never_written_ids());
  if (top.empty()) return;
  const std::size_t id = top[0].id;
  std::vector<double> column(N);
  for (std::size_t k = 0; k < N; ++k)
    column[k] =
        c.model.output.tied ? c.model.embedding.at({id, k}) : c.model.output.W.at({k, id});  // widened if stored
  DotProductNames names;
  const std::string index = fmt::format("{}[{}]", c.item(e.tensor, b), i);
  names.result = fmt::format("logits{}[\"{}\"]", index, readable_token(c.model, id));
  names.left = display_name(input->id) + index;
  names.right = c.model.output.tied ? fmt::format("E[{}]", id) : fmt::format("W_out[:,{}]", id);
  names.bias = fmt::format("b_out[{}]", id);
  std::optional<double> bias;
  if (!c.model.output.b.data.empty()) bias = c.model.output.b.data[id];  // tied or not (BERT's is tied)
  c.page.worked(worked_dot_product(names, row_of(x, i), column, bias, c.worked_options()));
}

void print_logits(const TraceEntry& e, PrintContext& c) {
  c.page.leave_layer();
  // a masked-LM head's rows score their own positions: its own "why"
  c.page.begin_step(page_of(e.id.kind), "Output logits",
                    c.model.output.fills_in ? "masked_lm" : explanation_of(e.id.kind));
  const bool tied_bias = c.model.output.tied && c.model.output.b.has_values();
  c.page.formula(c.model.output.tied
                     ? fmt::format("logits = {} · Eᵀ{}   (E: the embedding table{}, tied{})", c.operand_name(e, 0),
                                   tied_bias ? " + b_out" : "",
                                   c.page.first_detailed("embedding")
                                       ? fmt::format(" of step {}", c.page.first_detailed("embedding"))
                                       : "",
                                   tied_bias ? "; b_out: the head's own bias, one number per token" : "")
                     : fmt::format("logits = {} · W_out{}   (one score per vocabulary token)", c.operand_name(e, 0),
                                   c.model.output.b.data.empty() ? "" : " + b_out"));
  c.page.shapes(equation(e.operands, "@", e.tensor));
  if (!c.model.output.tied) c.page.weight("W_out", c.model.output.W);
  c.page.weight("b_out", c.model.output.b);
  work_logit(e, c);
  if (c.options.full) {
    c.page.tensor(display_name(e.id), e.tensor);
    TopKView view = top_view(e.tensor, c, {}, c.options.array.precision);
    view.caption = fmt::format("the {} largest logits of each row:", c.options.top_k);
    c.page.top_k(view);
  } else {
    c.page.line(
        fmt::format("({} per row; the largest lead the next step's table; --full prints all)", e.tensor.shape.back()));
  }
}

namespace {

// A masked-LM head's probabilities (BERT): the candidates for each [MASK] (every position's,
// when the text has none), and the sentence with each mask filled by its first candidate.
void print_fill_in(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  c.page.begin_step(page_of(e.id.kind), "Softmax: the candidates at each position", "masked_lm");
  c.page.formula("p = softmax(logits)   (each row: which token belongs at that position, seen from both sides)");
  c.page.shapes(shape_with_axes(t));
  if (c.options.full) c.page.tensor(display_name(e.id), t);
  const Sequence sequence = output_sequence(c);
  const std::size_t len = t.rank() >= 2 ? t.shape[t.rank() - 2] : 1;
  bool any_mask = false;
  for (std::size_t b = 0; b < batch_count(t); ++b)
    for (std::size_t pos = 0; pos < len; ++pos) any_mask = any_mask || is_mask_position(c, sequence, b, pos);
  TopKView view = top_view(t, c, c.model.vocab.never_written_ids(), c.options.array.precision, any_mask);
  view.caption =
      any_mask ? fmt::format("the {} most probable tokens for each [MASK]:", c.options.top_k)
               : fmt::format("the {} most probable tokens at each position (the text has no [MASK]):", c.options.top_k);
  c.page.top_k(view);
  const auto* tokens = c.trace.tokens(sequence);
  if (!any_mask || !tokens) return;
  // The sentence as the model reads it, each mask replaced by its most probable token.
  const std::size_t V = t.shape.back();
  for (std::size_t b = 0; b < tokens->size(); ++b) {
    if (c.options.filter.batch && b != *c.options.filter.batch) continue;
    std::string filled;
    for (std::size_t pos = 0; pos < (*tokens)[b].size() && pos < len; ++pos) {
      std::string token = readable_token(c.model, (*tokens)[b][pos]);
      if (is_mask_position(c, sequence, b, pos)) {
        const auto top = top_tokens(t.data.data() + (b * len + pos) * V, V, 1, c.model.vocab.never_written_ids());
        if (!top.empty()) token = "[" + readable_token(c.model, top[0].id) + "]";
      }
      filled += (pos ? " " : "") + token;
    }
    c.page.line(fmt::format("filled in{}: {}", c.item(t, b).empty() ? "" : " " + c.item(t, b), filled));
  }
}

}  // namespace

void print_probabilities(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  if (c.model.output.fills_in) return print_fill_in(e, c);
  c.page.begin_step(page_of(e.id.kind), "Softmax over the vocabulary", explanation_of(e.id.kind));
  c.page.formula("p = softmax(logits)   (each row: the next token's probabilities)");
  c.page.shapes(shape_with_axes(t));
  if (c.options.full) c.page.tensor(display_name(e.id), t);
  const std::vector<std::size_t> never = c.model.vocab.never_written_ids();
  TopKView view = top_view(t, c, never, c.options.array.precision);
  std::string left_out;
  for (std::size_t id : never) left_out += (left_out.empty() ? "" : ", ") + readable_token(c.model, id);
  view.caption = fmt::format("top {} next tokens{}:", c.options.top_k,
                             left_out.empty() ? "" : " (" + left_out + " are never written, so left out)");
  c.page.top_k(view);
  std::string greedy;
  for (const auto& row : view.rows)
    if (!row.empty()) greedy += (greedy.empty() ? "" : " ") + row[0].first.substr(1, row[0].first.size() - 2);
  c.page.line("greedy pick (the most probable at each position): " + greedy);
  if (c.options.unablated_probabilities) print_ablation_comparison(e, c);
}

}  // namespace attn
