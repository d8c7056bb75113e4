// The steps of multi-head attention, from the projections to the output projection.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "present/attention_views.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"

namespace attn {

namespace {

// The rows a projection multiplies: X (the encoder's input), Y (the decoder's), M (the
// encoder's output, which cross-attention's keys and values read), or x.
std::string projection_input(const TraceEntry& e) {
  if (e.id.block == Block::CrossAttention && e.id.kind != StepKind::Query) return "M";
  const auto& input = e.operands.empty() ? std::nullopt : e.operands[0].entry;
  if (input && input->kind == StepKind::Input) return input->sequence == Sequence::Target ? "Y" : "X";
  return "x";
}

// The worked element of Q: one dot product of a row of the input and a column of W_q.
void work_query_cell(const TraceEntry& e, const Tensor& W, const Tensor* bias, const std::string& source,
                     PrintContext& c) {
  const TraceEntry* input = c.operand_entry(e, 0);
  if (!input) return;
  const Tensor x = batch_item(input->tensor, std::min(c.cell_batch(), batch_count(input->tensor) - 1));
  if (c.cell_row() < x.shape[0] && c.cell_column() < W.shape[1])
    c.page.worked(worked_projection_cell(x, W, bias ? *bias : Tensor(), c.cell_row(), c.cell_column(), "Q", source,
                                         "W_q", "b_q", c.worked_options()));
}

}  // namespace

void print_projection(const TraceEntry& e, PrintContext& c) {
  const std::string letter = projection_letter(e.id.kind);
  const std::string upper = letter == "q" ? "Q" : letter == "k" ? "K" : "V";
  const AttentionWeights* w = c.attention_weights(e.id);
  const Tensor* bias = w ? (letter == "q" ? &w->b_q : letter == "k" ? &w->b_k : &w->b_v) : nullptr;
  if (bias && bias->data.empty()) bias = nullptr;
  c.page.begin_step(letter.c_str(),
                    (letter == "q"   ? "Query"
                     : letter == "k" ? "Key"
                                     : "Value") +
                        std::string(" projection"),
                    "projection_" + letter);
  const std::string source = projection_input(e);
  c.page.formula(fmt::format("{} = {} · W_{}{}{}", upper, source, letter, bias ? " + b_" + letter : "",
                             source == "M"   ? "   (M: the encoder's output, the 'memory')"
                             : source == "x" ? "   (x = " + (e.operands.empty() ? "" : e.operands[0].name) + ")"
                                             : ""));
  c.page.shapes(equation(e.operands, "@", e.tensor));
  if (w) {
    const Tensor& W = letter == "q" ? w->W_q : letter == "k" ? w->W_k : w->W_v;
    if (!w->heads.empty()) print_heads_side_by_side(letter.c_str(), *w, c);
    c.page.weight("W_" + letter, W);
    if (bias) c.page.weight("b_" + letter, *bias);
    if (letter == "q") work_query_cell(e, W, bias, source, c);
  }
  c.page.tensor(upper, e.tensor);
}

void print_split_heads(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const std::size_t H = c.model.config.num_heads, d = c.model.config.d_head;
  const std::string letter = projection_letter(e.id.kind);
  const std::string upper = letter == "q" ? "Q" : letter == "k" ? "K" : "V";
  const StepKind projection_kind = letter == "q" ? StepKind::Query : letter == "k" ? StepKind::Key : StepKind::Value;
  c.page.begin_step("split_heads",
                    H == 1 ? fmt::format("Split {} into heads (one head: only the axes move)", upper)
                           : fmt::format("Split {} into {} heads", upper, H),
                    H > 1 && letter == "q" ? "multiple_heads" : "split_heads");
  if (const TraceEntry* projection = c.sibling(e.id, projection_kind)) {
    const Tensor view = view_split(projection->tensor, H);
    c.page.formula(fmt::format("1. reshape: {} -> {}   (head h owns columns h*d .. h*d+{})",
                               shape_with_axes(projection->tensor), shape_with_axes(view), d - 1));
    c.page.tensor(upper, view);
    c.page.formula(fmt::format("2. transpose{}: {} -> {}   (heads first: one ({},d) matrix per head)",
                               view.rank() == 4 ? "(0, 2, 1, 3)" : "(1, 0, 2)", shape_with_axes(view),
                               shape_with_axes(t), t.axes[t.rank() - 2]));
  }
  c.page.tensor(upper, t);
}

void print_transposed_keys(const TraceEntry& e, PrintContext& c) {
  print_step_text(e, c,
                  {"transpose_k", "Transpose K", "transpose_k",
                   "Kᵀ = K.transpose(-2, -1): swap the last two axes so that Q · Kᵀ sums over d", "->", "K_T"});
}

void print_scores(const TraceEntry& e, PrintContext& c) {
  print_step_text(
      e, c, {"scores", "Raw scores", "scores", "scores = Q · Kᵀ   (scores[i][j] = query i · key j)", "@", "scores"});
  const auto qk = c.cell_head_matrices(e, StepKind::QueryHeads, StepKind::KeyHeads);
  const std::size_t i = c.cell_row(), j = c.cell_column();
  if (qk && i < qk->first.shape[0] && j < qk->second.shape[0])
    c.page.worked(worked_score_cell(qk->first, qk->second, i, j,
                                    "scores" + head_index(e.tensor, c.cell_batch(), c.cell_head()), "Q", "K",
                                    c.worked_options()));
}

void print_scaled_scores(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const std::size_t d = c.model.config.d_head;
  const std::size_t b = c.cell_batch(), h = c.cell_head(), i = c.cell_row(), j = c.cell_column();
  c.page.begin_step("scale", "Scale", "scale");
  c.page.formula(
      fmt::format("scaled = scores / √d = scores / √{} = scores / {}", d, plain_number(std::sqrt(double(d)))));
  c.page.shapes(shape_with_axes(t) + " / scalar -> " + shape_with_axes(t));
  c.page.tensor("scaled", t);
  const TraceEntry* scores = c.sibling(e.id, StepKind::Scores);
  if (scores && b < batch_count(t) && h < c.model.config.num_heads) {
    const Tensor m = head_matrix(scores->tensor, b, h);
    if (i < m.shape[0] && j < m.shape[1])
      c.page.worked(worked_scaling(m.data[i * m.shape[1] + j], d,
                                   fmt::format("scores{}[{}][{}]", head_index(t, b, h), i, j),
                                   fmt::format("scaled{}[{}][{}]", head_index(t, b, h), i, j), c.worked_options()));
  }
  print_labeled_scores(t, e.id, c);
}

void print_masked_scores(const TraceEntry& e, PrintContext& c) {
  const bool causal =
      e.id.block == Block::MaskedSelfAttention || (e.id.stack == Stack::Encoder && c.model.config.causal);
  print_step_text(
      e, c,
      {"masked_scores", "Mask", causal ? "causal_mask" : "padding_mask",
       "masked = scaled + mask   (-inf where a key must not be seen; softmax turns it into 0)", "+", "masked"});
}

void print_attention_weights(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const std::size_t b = c.cell_batch(), h = c.cell_head(), i = c.cell_row();
  const TraceEntry* masked = c.sibling(e.id, StepKind::MaskedScores);
  c.page.begin_step("softmax", "Softmax", "softmax");
  c.page.formula(fmt::format("weights = softmax({}, axis=-1) = exp(x - max) / sum(exp(x - max)), row by row",
                             masked ? "masked" : "scaled"));
  c.page.shapes(shape_with_axes(t) + " -> " + shape_with_axes(t));
  c.page.tensor("weights", t);
  c.page.line("each row sums to 1:");
  c.page.tensor("row sums", row_sums(t), false, false);
  const TraceEntry* input = masked ? masked : c.sibling(e.id, StepKind::ScaledScores);
  if (input && b < batch_count(t) && h < c.model.config.num_heads) {
    const Tensor m = head_matrix(input->tensor, b, h);
    if (i < m.shape[0])
      c.page.worked(worked_softmax_row(row_of(m, i),
                                       fmt::format("{}{}[{}]", masked ? "masked" : "scaled", head_index(t, b, h), i),
                                       fmt::format("weights{}[{}]", head_index(t, b, h), i), c.worked_options()));
  }
  print_heatmaps(t, e.id, c);
}

void print_context(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const std::size_t b = c.cell_batch(), h = c.cell_head(), i = c.cell_row();
  print_step_text(e, c,
                  {"context", "Context", "context", "context = weights · V   (each row: a weighted sum of value rows)",
                   "@", "context"});
  const auto wv = c.cell_head_matrices(e, StepKind::AttentionWeights, StepKind::ValueHeads);
  if (!wv || i >= wv->first.shape[0]) return;
  const Tensor &wm = wv->first, &vm = wv->second;
  ContextNames names;
  names.result = fmt::format("context{}[{}]", head_index(t, b, h), i);
  if (c.trace.tokens(key_sequence(e.id))) names.keys = c.labels(key_sequence(e.id), b, vm.shape[0]);
  c.page.worked(worked_context_row(row_of(wm, i), vm, names, c.worked_options()));
}

void print_merged_heads(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  c.page.begin_step("merge_heads", "Merge heads", "merge_heads");
  if (const TraceEntry* context = c.sibling(e.id, StepKind::Context)) {
    const Tensor& ctx = context->tensor;
    const bool batched = ctx.rank() == 4;
    const Tensor back =
        transposed(ctx, batched ? std::vector<std::size_t>{0, 2, 1, 3} : std::vector<std::size_t>{1, 0, 2});
    c.page.formula(fmt::format("1. transpose{}: {} -> {}   (positions first again)",
                               batched ? "(0, 2, 1, 3)" : "(1, 0, 2)", shape_with_axes(ctx), shape_with_axes(back)));
    c.page.tensor("context", back);
    c.page.formula(fmt::format("2. reshape: {} -> {}   (concat: the heads' vectors side by side)",
                               shape_with_axes(back), shape_with_axes(t)));
  }
  c.page.tensor("concat", t);
  const AttentionWeights* w = c.attention_weights(e.id);
  if (w && !w->has_output_projection()) {
    c.page.begin_step("output_projection", "Output projection (skipped)", "output_projection");
    c.page.formula("this block has no W_o: its output is the concatenation " + shape_with_axes(t));
  }
}

void print_output_projection(const TraceEntry& e, PrintContext& c) {
  const AttentionWeights* w = c.attention_weights(e.id);
  const bool bias = w && !w->b_o.data.empty();
  c.page.begin_step("output_projection", "Output projection", "output_projection");
  c.page.formula(std::string("output = concat · W_o") + (bias ? " + b_o" : ""));
  c.page.shapes(equation(e.operands, "@", e.tensor));
  if (w) {
    c.page.weight("W_o", w->W_o);
    if (bias) c.page.weight("b_o", w->b_o);
  }
  c.page.tensor("output", e.tensor);
}

}  // namespace attn
