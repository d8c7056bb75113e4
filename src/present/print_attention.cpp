// The steps of multi-head attention, from the projections to the output projection. The
// backward printers of the older steps are in print_backward_attention.cpp; a step added as a
// row since (the q/k/v bias, QK-norm) has both its printers here, its backward's beside its
// forward's, so that a new step is one printer file.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/step_roles.h"
#include "present/attention_views.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"

namespace attn {

namespace {

// The worked element of a projection, result = input · W (+ b): one dot product of a row
// of the input (operand 0) and a column of W, named with the full index (batch item first).
void work_projection_cell(const TraceEntry& e, const Tensor& W, const Tensor* bias, const std::string& weight,
                          const std::string& bias_name, PrintContext& c) {
  if (!c.page.detailed()) return;
  const TraceEntry* input = c.operand_entry(e, 0);
  if (!input) return;
  const std::size_t b = std::min(c.cell_batch(), batch_count(input->tensor) - 1);
  const Tensor x = batch_item(input->tensor, b);
  if (c.cell_row() < x.shape[0] && c.cell_column() < W.shape[1])
    c.page.worked(worked_projection_cell(
        x, W, bias ? *bias : Tensor(), c.cell_row(), c.cell_column(), display_name(e.id) + c.item(e.tensor, b),
        display_name(input->id) + c.item(input->tensor, b), weight, bias_name, c.worked_options()));
}

}  // namespace

void print_projection(const TraceEntry& e, PrintContext& c) {
  // Q = X · W_q; its bias, when the block has one, is the next step (print_bias)
  const std::string letter = projection_letter(e.id.kind);
  const std::string upper = display_name(e.id);
  const AttentionWeights* w = c.attention_weights(e.id);
  c.page.begin_step(page_of(e.id.kind),
                    (letter == "q"   ? "Query"
                     : letter == "k" ? "Key"
                                     : "Value") +
                        std::string(" projection"),
                    explanation_of(e.id.kind));
  const bool memory = e.id.block == Block::CrossAttention && e.id.kind != StepKind::Query;
  c.page.formula(fmt::format("{} = {} · W_{}{}", upper, c.operand_name(e, 0), letter,
                             memory ? "   (the encoder's output: the 'memory')" : ""));
  c.page.shapes(equation(e.operands, "@", e.tensor));
  if (w) {
    const Tensor& W = letter == "q" ? w->W_q : letter == "k" ? w->W_k : w->W_v;
    if (!w->heads.empty() && c.page.detailed()) print_heads_side_by_side(letter.c_str(), *w, c);
    c.page.weight("W_" + letter, W);
    work_projection_cell(e, W, nullptr, "W_" + letter, "", c);
  }
  c.page.tensor(upper, e.tensor);
}

void print_bias(const TraceEntry& e, PrintContext& c) {
  // e is Q + b_q (B,S,H*d), or K + b_k, V + b_v (B,T,G*d)
  const char* letter = e.id.kind == StepKind::BiasedQuery ? "q" : e.id.kind == StepKind::BiasedKey ? "k" : "v";
  const std::string name = display_name(e.id), bias = std::string("b_") + letter;
  const TraceEntry* product = c.operand_entry(e, 0);
  const std::string x = product ? c.operand_name(*product, 0) : "X";
  const std::string xw = fmt::format("{}·W_{}", x, letter);
  c.page.begin_step(page_of(e.id.kind),
                    fmt::format("{} bias", e.id.kind == StepKind::BiasedQuery ? "Query"
                                           : e.id.kind == StepKind::BiasedKey ? "Key"
                                                                              : "Value"),
                    explanation_of(e.id.kind));
  c.page.formula(
      fmt::format("{0} = {0} + {1}   (the bias {1} added to {2}, the same row at every position)", name, bias, xw));
  c.page.shapes(equation(e.operands, "+", e.tensor));
  const AttentionWeights* w = c.attention_weights(e.id);
  const Tensor* b = w ? (*letter == 'q' ? &w->b_q : *letter == 'k' ? &w->b_k : &w->b_v) : nullptr;
  if (b) c.page.weight(bias, *b);
  // One position's row worked by hand: --cell's batch item and row.
  const std::size_t item = c.cell_batch(), row = c.cell_row();
  if (b && product && c.page.detailed() && item < batch_count(e.tensor) && row < e.tensor.shape[e.tensor.rank() - 2]) {
    const std::string index = fmt::format("{}[{}]", c.item(e.tensor, item), row);
    c.page.worked(worked_sum_row(row_of(batch_item(product->tensor, item), row), to_vector(b->data), name + index,
                                 "(" + xw + ")" + index, bias, c.worked_options()));
  }
  c.page.tensor(name, e.tensor);
}

void print_bias_backward(const TraceEntry& e, PrintContext& c) {
  // e is dL/dQ (B,S,H*d) after the bias, or dL/dK, dL/dV -> the same tensor before it, db (H*d,)
  const bool q = e.id.kind == StepKind::BiasedQuery, k = e.id.kind == StepKind::BiasedKey;
  const std::string l = q ? "q" : k ? "k" : "v", L = q ? "Q" : k ? "K" : "V";
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       q   ? "Query bias"
                       : k ? "Key bias"
                           : "Value bias",
                       {fmt::format("dL/d{0} before the bias = dL/d{0} after it (adding a constant passes the "
                                    "gradient on unchanged)",
                                    L),
                        fmt::format("dL/db_{} = Σ dL/d{}, summed over every position", l, L)},
                       "dL/d" + L});
  print_weight_gradients(e, c, q ? WeightKind::b_q : k ? WeightKind::b_k : WeightKind::b_v);
}

void print_split_heads(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  // H heads, or G for the keys and values of grouped-query attention
  const std::size_t H = t.shape[t.rank() - 3], d = c.config(e.id).d_head;
  const std::string upper = display_name(c.operand_entry(e, 0) ? c.operand_entry(e, 0)->id : e.id);
  const std::string name = display_name(e.id);
  const bool grouped = axis_of(t, "G") < t.rank();  // the G key/value heads of grouped-query attention
  c.page.begin_step(
      page_of(e.id.kind),
      grouped  ? fmt::format("Split {} into {} key/value head{} (num_kv_heads G = {})", upper, H, H == 1 ? "" : "s", H)
      : H == 1 ? fmt::format("Split {} into heads (one head: only the axes move)", upper)
               : fmt::format("Split {} into {} heads", upper, H),
      H > 1 && e.id.kind == StepKind::QueryHeads ? "multiple_heads" : "split_heads");
  const TraceEntry* projection = c.operand_entry(e, 0);
  if (!projection) {
    c.page.tensor(name, t);
    return;
  }
  Tensor view = view_split(projection->tensor, H);
  if (grouped) view.axes[view.rank() - 2] = "G";
  const char* order = view.rank() == 4 ? "(0, 2, 1, 3)" : "(1, 0, 2)";
  if (!c.page.detailed()) {
    // As the first split showed: the same numbers, one (S,d) matrix per head.
    c.page.formula(fmt::format("{} = {} split into {} {}   (.reshape{}.transpose{})", name, upper, H,
                               grouped ? (H == 1 ? "key/value head" : "key/value heads") : "heads",
                               shape_with_axes(view), order));
    c.page.shapes(shape_with_axes(projection->tensor) + " -> " + shape_with_axes(t));
    return;
  }
  // Q_heads shows every number of the (S,H,d) in-between tensor: head h is its columns h*d..
  c.page.formula(fmt::format("1. reshape: {} -> {}   (head h: {} columns from h*{})",
                             shape_with_axes(projection->tensor), shape_with_axes(view), d, d));
  if (c.options.full) c.page.tensor(upper + ".reshape", view);
  c.page.formula(
      fmt::format("2. transpose{}: {} -> {}   (heads first)", order, shape_with_axes(view), shape_with_axes(t)));
  c.page.tensor(name, t);
}

void print_qk_norm(const TraceEntry& e, PrintContext& c) {
  const bool query = e.id.kind == StepKind::NormedQueries;
  const AttentionWeights* w = c.attention_weights(e.id);
  const Tensor* gamma = w ? (query ? &w->q_norm : &w->k_norm) : nullptr;
  const std::string name = display_name(e.id), from = c.operand_name(e, 0);
  const double eps = c.model.config.layer_norm_eps;
  c.page.begin_step(page_of(e.id.kind), fmt::format("RMSNorm over each {} head (QK-norm)", query ? "query" : "key"),
                    explanation_of(e.id.kind));
  c.page.formula(
      fmt::format("{} = RMSNorm({})   (each head's row x of d numbers: x / √(mean(x²) + eps) · {}, eps = {})", name,
                  from, query ? "q_norm" : "k_norm", plain_number(eps, 10)));
  c.page.shapes(equation(e.operands, "->", e.tensor));
  if (gamma) c.page.weights({{query ? "q_norm" : "k_norm", gamma}});
  c.page.tensor(name, e.tensor);
  // One head's row worked by hand: --cell's batch item, head and row (0, 0, 0 by default).
  const TraceEntry* input = c.operand_entry(e, 0);
  const std::size_t b = c.cell_batch(), h = c.cell_head(), row = c.cell_row();
  if (!gamma || !input || !c.page.detailed() || b >= batch_count(input->tensor)) return;
  const std::size_t heads = input->tensor.shape[input->tensor.rank() - 3];
  if (h >= heads) return;
  const Tensor m = head_matrix(input->tensor, b, h);  // (S,d)
  if (row >= m.shape[0]) return;
  c.page.worked(worked_rms_norm_row(row_of(m, row), to_vector(gamma->data), eps,
                                    fmt::format("{}{}[{}]", from, head_index(input->tensor, b, h), row),
                                    c.worked_options()));
}

void print_qk_norm_backward(const TraceEntry& e, PrintContext& c) {
  const bool query = e.id.kind == StepKind::NormedQueries;
  const std::string name = display_name(e.id), gamma = query ? "q_norm" : "k_norm";
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       fmt::format("RMSNorm over each {} head (QK-norm)", query ? "query" : "key"),
                       {fmt::format("dL/dx = r · (g - x̂ · mean(g ⊙ x̂)), per head and position   (r = 1 / sqrt(mean(x²) "
                                    "+ eps), x̂ = x · r, g = dL/d{} ⊙ {})",
                                    name, gamma),
                        fmt::format("dL/d{} = Σ dL/d{} ⊙ x̂, summed over every head and position", gamma, name)},
                       "dL/d" + name});
  print_weight_gradients(e, c, query ? WeightKind::QNorm : WeightKind::KNorm);
}

void print_rope(const TraceEntry& e, PrintContext& c) {
  const bool query = e.id.kind == StepKind::RotatedQueries;
  const TraceEntry* input = c.operand_entry(e, 0);
  const std::string name = display_name(e.id), from = c.operand_name(e, 0);
  // d: the head's numbers; r: those RoPE turns (all d, or partial rotary's first r)
  const ModelConfig config = c.config(e.id);
  const std::size_t head = config.d_head, d = config.rope_dims();
  const bool partial = d < head;
  const double theta = c.model.config.rope_theta;
  c.page.begin_step(page_of(e.id.kind),
                    fmt::format("Rotate the {} by position (RoPE{})", query ? "queries" : "keys",
                                partial ? fmt::format(", the first {} of each head's {} numbers", d, head) : ""),
                    partial ? "partial_rope" : explanation_of(e.id.kind));
  const bool llama3 = c.model.config.rope_scaling.llama3;
  const char* w = partial ? "r" : "d";
  if (c.page.detailed())
    c.page.formula(fmt::format(
        "{0}[p, i] = {1}[p, i]·cos(p·θ_i) - {1}[p, i + {4}/2]·sin(p·θ_i),  {0}[p, i + {4}/2] = "
        "{1}[p, i + {4}/2]·cos(p·θ_i) + {1}[p, i]·sin(p·θ_i),  θ_i = {2}, for each of "
        "the {4}/2 = {3} pairs (i, i + {4}/2) of every head and position p",
        name, from, llama3 ? "inv_freq[i] (rope.inv_freq, Llama 3.1's)" : fmt::format("{:g}^(-2i/{})", theta, w), d / 2,
        w));
  if (c.page.detailed() && partial)
    c.page.formula(fmt::format("{0}[p, j] = {1}[p, j] for j = r .. d-1   (r = {2} of d = {3}: the rest pass unturned)",
                               name, from, d, head));
  if (!c.page.detailed())  // as the first rope step showed
    c.page.formula(fmt::format("{} = {} turned by position", name, from));
  c.page.shapes(equation(e.operands, "->", e.tensor));
  c.page.tensor(name, e.tensor);
  // One pair turned by hand (rope_pair_cell: position 1 unless --cell names one).
  const auto cell = rope_pair_cell(e.tensor, c);
  if (!input || !c.page.detailed() || !cell || llama3) return;
  const auto [b, h, p, i] = *cell;
  const Tensor m = head_matrix(input->tensor, b, h);  // (S,d)
  const std::string index = fmt::format("{}[{}]", head_index(e.tensor, b, h), p);
  c.page.worked(worked_rope_pair(m.data[p * head + i], m.data[p * head + i + d / 2], p, i, d, theta,
                                 {name + index, display_name(input->id) + index}, c.worked_options()),
                "worked, one pair:");
}

void print_rope_frequencies(const TraceEntry& e, PrintContext& c) {
  const RopeScaling& s = c.model.config.rope_scaling;
  const std::size_t d = c.config(e.id).d_head;
  const double theta = c.model.config.rope_theta, L = s.original_max_position_embeddings;
  c.page.begin_step(page_of(e.id.kind), "Adjust RoPE's frequencies (Llama 3.1)", explanation_of(e.id.kind));
  c.page.formula(fmt::format(
      "inv_freq[i] = f_i = {0:g}^(-2i/d) for a wavelength λ_i = 2π / f_i < L / high_freq_factor = {1:g}, f_i / "
      "factor = f_i / {2:g} for λ_i > L / low_freq_factor = {3:g}, else (1 - s)·f_i / {2:g} + s·f_i with s = "
      "(L / λ_i - {4:g}) / ({5:g} - {4:g});  L = original_max_position_embeddings = {6:g}, d = {7}",
      theta, L / s.high_freq_factor, s.factor, L / s.low_freq_factor, s.low_freq_factor, s.high_freq_factor, L, d));
  c.page.shapes(fmt::format("(d={}) -> {}", d, shape_with_axes(e.tensor)));
  c.page.tensor(display_name(e.id), e.tensor);
  if (!c.page.detailed() || e.tensor.size() == 0) return;
  // The pair --cell names (its last number, mod d/2; the last pair by default, the slowest).
  const std::size_t i = c.options.cell_given ? c.cell_column() % e.tensor.size() : e.tensor.size() - 1;
  c.page.worked(worked_llama3_frequency(i, d, theta, s, e.tensor.data[i], c.worked_options()), "worked, one pair:");
}

void print_repeat_kv(const TraceEntry& e, PrintContext& c) {
  const bool keys = e.id.kind == StepKind::RepeatedKeys;
  const std::size_t H = c.config(e.id).num_heads, G = c.config(e.id).kv_heads(), r = H / G;
  const std::string name = display_name(e.id), from = c.operand_name(e, 0);
  c.page.begin_step(page_of(e.id.kind),
                    fmt::format("Repeat the {} {} head{} for the {} query heads ({})", G, keys ? "key" : "value",
                                G == 1 ? "" : "s", H, G == 1 ? "multi-query attention" : "grouped-query attention"),
                    explanation_of(e.id.kind));
  c.page.formula(
      fmt::format("{}[:, h] = {}[:, h // {}]   (H / G = {} query heads share each {} head; nothing is "
                  "computed)",
                  name, from, r, r, keys ? "key" : "value"));
  c.page.shapes(equation(e.operands, "->", e.tensor));
  if (c.page.detailed()) {
    std::string groups;
    for (std::size_t g = 0; g < G; ++g) {
      std::string heads;
      for (std::size_t h = g * r; h < (g + 1) * r; ++h) heads += (h == g * r ? "" : ", ") + std::to_string(h);
      groups += fmt::format("{}{} head {} -> query heads {}", g ? "; " : "", keys ? "key" : "value", g, heads);
    }
    c.page.line(groups);
    c.page.tensor(name, e.tensor);
  }
}

void print_transposed_keys(const TraceEntry& e, PrintContext& c) {
  c.page.begin_step(page_of(e.id.kind), "Transpose K", explanation_of(e.id.kind));
  c.page.formula(fmt::format("K_T = {}.transpose(-2, -1)   ({} · K_T then sums over d)", c.operand_name(e, 0),
                             display_name(StepId{attending_queries(c, e.id)})));
  c.page.shapes(equation(e.operands, "->", e.tensor));
  // A rearrangement: each head's keys as columns, the numbers of K unchanged.
  if (c.options.full)
    c.page.tensor(display_name(e.id), e.tensor);
  else if (c.page.detailed())
    c.page.line("(K's numbers, each head's keys as columns; --full prints K_T)");
}

void print_scores(const TraceEntry& e, PrintContext& c) {
  const StepKind queries = attending_queries(c, e.id), keys = attended_keys(c, e.id);
  const std::string q_name = display_name(StepId{queries}), k_name = display_name(StepId{keys});
  print_step_text(e, c,
                  {page_of(e.id.kind), "Raw scores", explanation_of(e.id.kind),
                   fmt::format("scores = {} · K_T   (scores[i][j] = query i · key j)", q_name), "@"});
  const auto qk = c.cell_head_matrices(e, queries, keys);
  const std::size_t i = c.cell_row(), j = c.cell_column();
  const std::string index = head_index(e.tensor, c.cell_batch(), c.cell_head());
  if (qk && i < qk->first.shape[0] && j < qk->second.shape[0])
    c.page.worked(worked_score_cell(qk->first, qk->second, i, j, "scores" + index, q_name + index, k_name + index,
                                    c.worked_options()));
}

namespace {

// The scale step of a model that does not scale (GPT-Neo): the scores as they are, and the
// element --cell names shown unchanged.
void print_unscaled_scores(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const std::size_t b = c.cell_batch(), h = c.cell_head(), i = c.cell_row(), j = c.cell_column();
  c.page.begin_step(page_of(e.id.kind), "Scale (none: this model does not divide by √d)", "unscaled_scores");
  c.page.formula("scaled = scores   (no 1/√d: the scores go to the softmax as they are)");
  c.page.shapes(shape_with_axes(t) + " -> " + shape_with_axes(t));
  const TraceEntry* scores = c.sibling(e.id, StepKind::Scores);
  if (!scores || !c.page.detailed() || b >= batch_count(t) || h >= c.model.config.num_heads) return;
  const Tensor m = head_matrix(scores->tensor, b, h);
  if (i < m.shape[0] && j < m.shape[1])
    c.page.worked(fmt::format("scaled{0}[{1}][{2}] = scores{0}[{1}][{2}] = {3}   (unchanged)", head_index(t, b, h), i,
                              j, plain_number(m.data[i * m.shape[1] + j])));
}

}  // namespace

void print_scaled_scores(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const std::size_t d = c.config(e.id).d_head;
  const std::size_t b = c.cell_batch(), h = c.cell_head(), i = c.cell_row(), j = c.cell_column();
  if (c.model.config.score_scale == ScoreScale::None) {
    print_unscaled_scores(e, c);
    return;
  }
  c.page.begin_step(page_of(e.id.kind), "Scale", explanation_of(e.id.kind));
  c.page.formula(c.model.config.scores_times_inverse_root
                     ? fmt::format("scaled = scores · {}^-0.5   (d^-0.5 = 1/√d = {}, multiplied as transformers does)",
                                   d, plain_number(std::pow(double(d), -0.5)))
                     : fmt::format("scaled = scores / √{}   (√d = {})", d, plain_number(std::sqrt(double(d)))));
  c.page.shapes(shape_with_axes(t) + " / scalar -> " + shape_with_axes(t));
  // Compact: the scores divided by a number; the scores before and the weights after show.
  if (c.page.detailed()) c.page.tensor(display_name(e.id), t);
  const TraceEntry* scores = c.sibling(e.id, StepKind::Scores);
  if (scores && b < batch_count(t) && h < c.config(e.id).num_heads) {
    const Tensor m = head_matrix(scores->tensor, b, h);
    if (i < m.shape[0] && j < m.shape[1])
      c.page.worked(worked_scaling(m.data[i * m.shape[1] + j], d,
                                   fmt::format("scores{}[{}][{}]", head_index(t, b, h), i, j),
                                   fmt::format("scaled{}[{}][{}]", head_index(t, b, h), i, j), c.worked_options()));
  }
  if (c.options.full) print_labeled_scores(t, e.id, c);
}

namespace {

// Whether the block of `id` masks later positions: the decoder's self-attention, and a
// decoder-only model's.
bool causal_block(const StepId& id, const PrintContext& c) {
  return id.block == Block::MaskedSelfAttention || (id.stack == Stack::Encoder && c.model.config.causal);
}

// The query row the softmax and the context are worked for: the one --cell names; else, in
// a causal block, the last query's, which attends to every position (row 0 reads itself
// alone: softmax([x, -inf, ...]) is [1, 0, ...] and its context is V[0]); else row 0.
std::size_t worked_query_row(const StepId& id, const PrintContext& c, std::size_t queries) {
  if (c.options.cell_given || !causal_block(id, c) || queries == 0) return c.cell_row();
  return queries - 1;
}

}  // namespace

void print_masked_scores(const TraceEntry& e, PrintContext& c) {
  const bool causal = causal_block(e.id, c);
  print_step_text(e, c,
                  {page_of(e.id.kind), "Mask", causal ? "causal_mask" : "padding_mask",
                   "masked = scaled + mask   (softmax turns -inf into 0)", "+"});
}

void print_attention_weights(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const std::size_t b = c.cell_batch(), h = c.cell_head();
  const std::size_t i = worked_query_row(e.id, c, t.rank() >= 2 ? t.shape[t.rank() - 2] : 0);
  const TraceEntry* masked = c.sibling(e.id, StepKind::MaskedScores);
  c.page.begin_step(page_of(e.id.kind), "Softmax", explanation_of(e.id.kind));
  c.page.formula(fmt::format("weights = softmax({}, axis=-1)   (row by row)", masked ? "masked" : "scaled"));
  c.page.shapes(shape_with_axes(t) + " -> " + shape_with_axes(t));
  c.page.tensor(display_name(e.id), t);
  if (c.page.detailed()) {
    double off = 0;
    const Tensor sums = row_sums(t);
    for (double s : sums.data) off = std::max(off, std::abs(s - 1));
    c.page.line(fmt::format("every row sums to 1 (row sums: {} of them, at most {:.1e} from 1)", sums.size(), off));
  }
  const TraceEntry* input = masked ? masked : c.sibling(e.id, StepKind::ScaledScores);
  if (input && b < batch_count(t) && h < c.config(e.id).num_heads) {
    const Tensor m = head_matrix(input->tensor, b, h);
    if (i < m.shape[0])
      c.page.worked(worked_softmax_row(row_of(m, i),
                                       fmt::format("{}{}[{}]", masked ? "masked" : "scaled", head_index(t, b, h), i),
                                       fmt::format("weights{}[{}]", head_index(t, b, h), i), c.worked_options()));
  }
  print_heatmaps(t, masked ? &masked->tensor : nullptr, e.id, c);
}

void print_context(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  const std::size_t b = c.cell_batch(), h = c.cell_head();
  const std::size_t i = worked_query_row(e.id, c, t.rank() >= 2 ? t.shape[t.rank() - 2] : 0);
  const StepKind values = attended_values(c, e.id);
  const std::string v_name = display_name(StepId{values});
  print_step_text(e, c,
                  {page_of(e.id.kind), "Context", explanation_of(e.id.kind),
                   fmt::format("context = weights · {}   (each row: a weighted sum of value rows)", v_name), "@"});
  const auto wv = c.cell_head_matrices(e, StepKind::AttentionWeights, values);
  if (!wv || i >= wv->first.shape[0]) return;
  const Tensor &wm = wv->first, &vm = wv->second;
  ContextNames names;
  names.result = fmt::format("context{}[{}]", head_index(t, b, h), i);
  names.values = v_name + head_index(t, b, h);
  names.keys = c.labels(key_sequence(e.id), b, vm.shape[0]);
  c.page.worked(worked_context_row(row_of(wm, i), vm, names, c.worked_options()));
}

void print_merged_heads(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  c.page.begin_step(page_of(e.id.kind), "Merge heads", explanation_of(e.id.kind));
  const TraceEntry* ablated = c.sibling(e.id, StepKind::ContextAblated);  // --ablate: what the merge read
  if (const TraceEntry* context = ablated ? ablated : c.sibling(e.id, StepKind::Context)) {
    const Tensor& ctx = context->tensor;
    const bool batched = ctx.rank() == 4;
    const Tensor back =
        transposed(ctx, batched ? std::vector<std::size_t>{0, 2, 1, 3} : std::vector<std::size_t>{1, 0, 2});
    const char* order = batched ? "(0, 2, 1, 3)" : "(1, 0, 2)";
    if (c.page.detailed()) {
      // The split of the queries showed the reshape's in-between tensor; this is its inverse.
      c.page.formula(fmt::format("1. transpose{}: {} -> {}   (positions first)", order, shape_with_axes(ctx),
                                 shape_with_axes(back)));
      if (c.options.full) c.page.tensor("context.transpose", back);
      c.page.formula(
          fmt::format("2. reshape: {} -> {}   (the heads side by side)", shape_with_axes(back), shape_with_axes(t)));
    } else {
      c.page.formula(fmt::format("concat = context, its heads merged   (.transpose{}.reshape)", order));
      c.page.shapes(shape_with_axes(ctx) + " -> " + shape_with_axes(t));
    }
  }
  c.page.tensor(display_name(e.id), t);
  const AttentionWeights* w = c.attention_weights(e.id);
  if (w && !w->has_output_projection()) {
    c.page.begin_step(page_of(StepKind::OutputProjection), "Output projection (skipped)",
                      explanation_of(StepKind::OutputProjection));
    c.page.formula("this block has no W_o: its output is the concatenation " + shape_with_axes(t));
  }
}

void print_output_projection(const TraceEntry& e, PrintContext& c) {
  const AttentionWeights* w = c.attention_weights(e.id);
  const bool bias = w && !w->b_o.data.empty();
  c.page.begin_step(page_of(e.id.kind), "Output projection", explanation_of(e.id.kind));
  c.page.formula(fmt::format("{} = concat · W_o{}", display_name(e.id), bias ? " + b_o" : ""));
  c.page.shapes(equation(e.operands, "@", e.tensor));
  if (w) {
    c.page.weight("W_o", w->W_o);
    if (bias) c.page.weight("b_o", w->b_o);
    work_projection_cell(e, w->W_o, bias ? &w->b_o : nullptr, "W_o", "b_o", c);
  }
  c.page.tensor(display_name(e.id), e.tensor);
}

}  // namespace attn
