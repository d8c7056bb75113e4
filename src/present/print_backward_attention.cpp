// Multi-head attention backward, from the output projection down to the projections.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/step_roles.h"
#include "present/attention_views.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"
#include "present/worked_backward.h"

namespace attn {

namespace {

std::string upper(const std::string& letter) { return letter == "q" ? "Q" : letter == "k" ? "K" : "V"; }

// Column c of a matrix.
std::vector<double> column_of(const Tensor& m, std::size_t c) {
  std::vector<double> out;
  for (std::size_t r = 0; r < m.shape[0]; ++r) out.push_back(m.data[r * m.shape[1] + c]);
  return out;
}

// The (S,d) matrices of head h of the cell's batch item: the gradient entry e itself and
// the forward tensor `kind` of its block; nullopt when either is gone or the cell is outside.
std::optional<std::pair<Tensor, Tensor>> gradient_and_forward(const TraceEntry& e, StepKind kind, PrintContext& c) {
  const TraceEntry* f = c.forward_sibling(e.id, kind);
  const std::size_t b = c.cell_batch(), h = c.cell_head();
  if (!f || b >= batch_count(e.tensor) || h >= c.config(e.id).num_heads) return std::nullopt;
  return std::pair{head_matrix(e.tensor, b, h), head_matrix(f->tensor, b, h)};
}

}  // namespace

void print_projection_backward(const TraceEntry& e, PrintContext& c) {
  const std::string l = projection_letter(e.id.kind), L = upper(l);
  const bool cross_kv = e.id.block == Block::CrossAttention && l != "q";
  const std::string x = cross_kv ? "M" : "X";
  print_backward_text(e, c,
                      {l.c_str(),
                       L == "Q"   ? "Query projection"
                       : L == "K" ? "Key projection"
                                  : "Value projection",
                       {fmt::format("dL/d{0} += dL/d{1} · W_{2}ᵀ   ({0}'s share through {1}{3})", x, L, l,
                                    cross_kv ? ", M the encoder's output" : ""),
                        // a bias b_q is its own step, with its own backward (print_bias_backward)
                        fmt::format("dL/dW_{0} = {1}ᵀ · dL/d{2}, summed over every position", l, x, L)},
                       "dL/d" + L});
  const WeightKind w = l == "q" ? WeightKind::W_q : l == "k" ? WeightKind::W_k : WeightKind::W_v;
  print_weight_gradients(e, c, w);
}

void print_split_heads_backward(const TraceEntry& e, PrintContext& c) {
  const std::string L = upper(projection_letter(e.id.kind));
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       fmt::format("Split {} into heads", L),
                       {"each gradient goes back where its number came from: transpose the heads back, then "
                        "reshape (B,H,S,d) -> (B,S,H*d)"},
                       "dL/d" + L + "_heads"});
}

void print_rope_backward(const TraceEntry& e, PrintContext& c) {
  // e is dL/dQ_rope (B,H,S,d), or dL/dK_rope (B,G,S,d) -> dL/dQ_heads, dL/dK_heads alike
  const bool query = e.id.kind == StepKind::RotatedQueries;
  const std::string L = query ? "Q" : "K";
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       fmt::format("Rotate the {} by position (RoPE)", query ? "queries" : "keys"),
                       {fmt::format("a rotation's gradient is the rotation back, by -p·θ_i:  dL/d{0}_heads[i] = "
                                    "dL/d{0}_rope[i]·cos + dL/d{0}_rope[i + d/2]·sin,  dL/d{0}_heads[i + d/2] = "
                                    "dL/d{0}_rope[i + d/2]·cos - dL/d{0}_rope[i]·sin",
                                    L)},
                       "dL/d" + L + "_rope"});
  const auto cell = rope_pair_cell(e.tensor, c);
  // (the worked pair reads its angle off rope_theta: Llama 3.1's frequencies are rope.inv_freq's)
  if (!cell || c.model.config.rope_scaling.llama3) return;
  const auto [b, h, p, i] = *cell;
  const std::size_t d = c.config(e.id).d_head;
  const Tensor m = head_matrix(e.tensor, b, h);  // (S,d)
  const std::string index = fmt::format("{}[{}]", head_index(e.tensor, b, h), p);
  c.page.worked(
      worked_rope_pair_backward(m.data[p * d + i], m.data[p * d + i + d / 2], p, i, d, c.model.config.rope_theta,
                                {"dL/d" + L + "_heads" + index, "dL/d" + L + "_rope" + index}, c.worked_options()),
      "worked, one pair:");
}

void print_repeat_kv_backward(const TraceEntry& e, PrintContext& c) {
  // e is dL/dK_rep or dL/dV_rep (B,H,T,d) -> dL/d(the G heads repeated) (B,G,T,d)
  const bool keys = e.id.kind == StepKind::RepeatedKeys;
  const std::size_t r = c.config(e.id).num_heads / c.config(e.id).kv_heads();
  const std::string L = keys ? "K" : "V";
  const TraceEntry* forward = c.forward_sibling(e.id, e.id.kind);
  const std::string from = forward ? c.operand_name(*forward, 0) : L + "_heads";  // K_rope with RoPE
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       fmt::format("Repeat the {} heads", keys ? "key" : "value"),
                       {fmt::format("dL/d{0}[:, g] = Σ dL/d{1}_rep[:, h] over the {2} query heads h with h // {2} = "
                                    "g (a head read {2} times gets {2} gradients)",
                                    from, L, r)},
                       "dL/d" + L + "_rep"});
  // One element worked: the cell's batch item, the key/value head g of its query head, row, column.
  const std::size_t b = c.cell_batch(), g = c.cell_head() / r, t = c.cell_row(), j = c.cell_column();
  const std::size_t T = e.tensor.shape[e.tensor.rank() - 2], d = e.tensor.shape.back();
  if (b >= batch_count(e.tensor) || g * r >= e.tensor.shape[e.tensor.rank() - 3] || t >= T || j >= d) return;
  std::vector<double> terms;
  std::vector<std::string> names;
  for (std::size_t h = g * r; h < (g + 1) * r; ++h) {
    terms.push_back(head_matrix(e.tensor, b, h).data[t * d + j]);
    names.push_back(fmt::format("dL/d{}_rep{}[{}][{}]", L, head_index(e.tensor, b, h), t, j));
  }
  const std::string heads = r == 2 ? fmt::format("query heads {} and {}", g * r, g * r + 1)
                                   : fmt::format("the {} query heads {} to {}", r, g * r, (g + 1) * r - 1);
  c.page.worked(
      worked_repeat_kv_backward(terms, names, fmt::format("dL/d{}{}[{}][{}]", from, head_index(e.tensor, b, g), t, j),
                                heads, c.worked_options()),
      "worked, one element:");
}

void print_transposed_keys_backward(const TraceEntry& e, PrintContext& c) {
  print_backward_text(e, c, {page_of(e.id.kind), "Transpose K", {"dL/dK = (dL/dKᵀ)ᵀ: transposed back"}, "dL/dK_T"});
}

void print_scores_backward(const TraceEntry& e, PrintContext& c) {
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       "Raw scores",
                       {"scores = Q · Kᵀ:  dL/dQ = dL/dscores · K,  dL/dKᵀ = Qᵀ · dL/dscores",
                        "(score[i][j] = q_i · k_j, so it sends dL/dscore[i][j] · k_j to q_i and · q_i to k_j)"},
                       "dL/dscores"});
  const auto m = gradient_and_forward(e, attended_keys(c, e.id), c);
  const std::size_t i = c.cell_row(), col = c.cell_column();
  if (m && i < m->first.shape[0] && col < m->second.shape[1])
    c.page.worked(
        worked_dot_product({fmt::format("dL/dQ{}[{}][{}]", head_index(e.tensor, c.cell_batch(), c.cell_head()), i, col),
                            fmt::format("dL/dscores[{}]", i), fmt::format("K[:,{}]", col), ""},
                           row_of(m->first, i), column_of(m->second, col), std::nullopt, c.worked_options()));
}

void print_scaled_scores_backward(const TraceEntry& e, PrintContext& c) {
  const std::size_t d = c.config(e.id).d_head;
  if (c.model.config.score_scale == ScoreScale::None) {
    print_backward_text(e, c,
                        {page_of(e.id.kind),
                         "Scale (none)",
                         {"scaled = scores (this model does not divide by √d):  dL/dscores = dL/dscaled"},
                         "dL/dscaled"});
    return;
  }
  print_backward_text(
      e, c,
      {page_of(e.id.kind),
       "Scale",
       {c.model.config.scores_times_inverse_root
            ? fmt::format("scaled = scores · d^-0.5:  dL/dscores = dL/dscaled · {}^-0.5 = dL/dscaled · {}", d,
                          plain_number(std::pow(double(d), -0.5)))
            : fmt::format("scaled = scores / √d:  dL/dscores = dL/dscaled / √{} = dL/dscaled / {}", d,
                          plain_number(std::sqrt(double(d))))},
       "dL/dscaled"});
}

void print_masked_scores_backward(const TraceEntry& e, PrintContext& c) {
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       "Mask",
                       {"masked = scaled + mask:  dL/dscaled = dL/dmasked where a key is visible, exactly 0 where the "
                        "mask is -inf",
                        "(a hidden key got weight 0, so its score changes nothing: no gradient reaches it)"},
                       "dL/dmasked"});
}

void print_attention_weights_backward(const TraceEntry& e, PrintContext& c) {
  const std::string x = masks_scores(c.trace, e.id) ? "masked" : "scaled";
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       "Softmax",
                       {fmt::format("dL/d{} = w ⊙ (dL/dw - Σ_j dL/dw_j · w_j), row by row (w the weights)", x)},
                       "dL/dweights"});
  const auto m = gradient_and_forward(e, e.id.kind, c);
  const std::size_t i = c.cell_row();
  if (m && i < m->first.shape[0])
    c.page.worked(worked_softmax_backward_row(
        row_of(m->second, i), row_of(m->first, i),
        fmt::format("dL/d{}{}[{}]", x, head_index(e.tensor, c.cell_batch(), c.cell_head()), i), c.worked_options()));
}

void print_context_backward(const TraceEntry& e, PrintContext& c) {
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       "Context",
                       {"context = weights · V:  dL/dweights = dL/dcontext · Vᵀ,  dL/dV = weightsᵀ · dL/dcontext"},
                       "dL/dcontext"});
  const auto m = gradient_and_forward(e, attended_values(c, e.id), c);
  const std::size_t i = c.cell_row(), j = c.cell_column();
  if (m && i < m->first.shape[0] && j < m->second.shape[0])
    c.page.worked(worked_dot_product(
        {fmt::format("dL/dweights{}[{}][{}]", head_index(e.tensor, c.cell_batch(), c.cell_head()), i, j),
         fmt::format("dL/dcontext[{}]", i), fmt::format("V[{}]", j), ""},
        row_of(m->first, i), row_of(m->second, j), std::nullopt, c.worked_options()));
}

void print_context_ablated_backward(const TraceEntry& e, PrintContext& c) {
  const std::vector<std::size_t> heads = c.input.ablation.heads_of(e.id.stack, e.id.layer);
  std::string list;
  for (std::size_t h : heads) list += (list.empty() ? "" : ", ") + std::to_string(h);
  print_backward_text(
      e, c,
      {page_of(e.id.kind),
       "Ablated context",
       {c.input.ablation.mean
            ? fmt::format("heads {{{}}} were set to their mean over the S positions: dL/dcontext[h, j] = mean over "
                          "i of dL/dcontext_ablated[h, i], the same in every row j; the other heads pass unchanged",
                          list)
            : fmt::format("heads {{{}}} were set to zero, so they reached nothing: dL/dcontext[h] = 0; the other "
                          "heads pass unchanged",
                          list)},
       "dL/dcontext_ablated"});
}

void print_merged_heads_backward(const TraceEntry& e, PrintContext& c) {
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       "Merge heads",
                       {"each head gets back the gradient of its own columns: reshape (B,S,H*d) -> (B,S,H,d), then "
                        "transpose to (B,H,S,d)"},
                       "dL/dconcat"});
}

void print_output_projection_backward(const TraceEntry& e, PrintContext& c) {
  // dL/db_o only for a model that has b_o (the forward shows "+ b_o" the same way)
  const AttentionWeights* w = c.attention_weights(e.id);
  const bool bias = w && w->b_o.has_values();
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       "Output projection",
                       {std::string("dL/dconcat = dL/doutput · W_oᵀ,  dL/dW_o = concatᵀ · dL/doutput") +
                        (bias ? ",  dL/db_o = Σ dL/doutput" : "")},
                       "dL/doutput"});
  print_weight_gradients(e, c, WeightKind::W_o);
  print_weight_gradients(e, c, WeightKind::b_o);
}

}  // namespace attn
