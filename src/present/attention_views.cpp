#include "present/attention_views.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "present/tensor_views.h"

namespace attn {

Sequence key_sequence(const StepId& id) {
  // self-attention's keys are its queries' sequence; cross-attention's the source
  return id.block == Block::CrossAttention ? Sequence::Source : id.sequence;
}

namespace {
// What decoder position t writes, the token after it: its label when the file gives labels,
// else the next target token, or <EOS> after the last when the greedy run predicted it;
// empty where unknown or <PAD>.
std::string written_token(const PrintContext& c, std::size_t b, std::size_t t) {
  const Vocabulary& vocab = c.model.vocab;
  const auto pad = vocab.special_id(SpecialRole::Pad), end = vocab.special_id(SpecialRole::End);
  const Tensor& labels = c.input.labels;
  if (!labels.data.empty()) {
    const std::size_t T = labels.shape.back();
    if (t >= T || b * T + t >= labels.size()) return "";
    const auto label = static_cast<std::size_t>(labels.data[b * T + t]);
    return label == pad ? "" : vocab.token(label);
  }
  const std::string padding = pad ? vocab.token(*pad) : std::string();
  const auto* tokens = c.trace.tokens(Sequence::Target);
  if (!tokens || b >= tokens->size()) return "";
  const std::vector<std::string>& row = (*tokens)[b];
  const bool last = t + 1 >= row.size() || (pad && row[t + 1] == padding);
  if (!last) return row[t + 1];
  const auto& ends = c.input.target_tokens.predicts_end;
  const bool ended = t < row.size() && !(pad && row[t] == padding) && b < ends.size() && ends[b];
  return ended && end ? vocab.token(*end) : "";
}

// Under a cross-attention heatmap: each row is where the decoder writes its next token, so
// the keys it weighs are the source words it reads to write that token (the alignment).
std::string writes_line(const PrintContext& c, std::size_t b, std::size_t T) {
  const auto labels = c.labels(Sequence::Target, b, T, false);
  std::string pairs;
  for (std::size_t t = 0; t < T; ++t) {
    const std::string next = written_token(c, b, t);
    // (shown as the labels show tokens: a checkpoint's pieces readable, "␣dealer")
    if (!next.empty())
      pairs += fmt::format("{}{}→{}", pairs.empty() ? "" : "  ", labels[t], readable_token(c.model, next));
  }
  return pairs.empty() ? "" : "each row writes: " + pairs;
}
}  // namespace

void print_heatmaps(const Tensor& weights, const Tensor* masked_scores, const StepId& id, PrintContext& c) {
  if (!c.options.views || !c.page.views_shown()) return;
  // (A terminal leaves out maps of more than 32 queries; an HTML page draws them all.)
  const std::size_t S = weights.shape[weights.rank() - 2], T = weights.shape.back();
  const std::size_t B = batch_count(weights), H = c.config(id).num_heads;
  for (std::size_t b = 0; b < B; ++b) {
    if (c.options.filter.batch && b != *c.options.filter.batch) continue;
    HeatmapView view;
    for (std::size_t head = 0; head < H; ++head) {
      if (c.options.filter.head && head != *c.options.filter.head) continue;
      view.heads.push_back(head_matrix(weights, b, head));
      Tensor masked;
      if (masked_scores) {
        masked = head_matrix(*masked_scores, b, head);
        for (double& v : masked.data) v = std::isinf(v) && v < 0 ? 1.0 : 0.0;
      }
      view.masked.push_back(masked);
      view.titles.push_back(fmt::format("head {}", head));
    }
    view.row_labels = c.labels(id.sequence, b, S, false);
    view.column_labels = c.labels(key_sequence(id), b, T, false);
    view.caption = fmt::format("heatmap{}: rows are queries, columns keys",
                               B > 1 ? fmt::format(" of batch item {}", b) : std::string());
    if (B > 1) view.batch_item = b;
    if (id.block == Block::CrossAttention) view.footnote = writes_line(c, b, S);
    c.page.heatmap(view);
  }
}

void print_labeled_scores(const Tensor& scaled, const StepId& id, PrintContext& c) {
  if (!c.options.views || !c.page.full_text()) return;
  const std::size_t S = scaled.shape[scaled.rank() - 2], T = scaled.shape.back();
  if (S > 12 || T > 12) return;
  const std::size_t b = std::min(c.cell_batch(), batch_count(scaled) - 1);
  const std::size_t h = std::min(c.cell_head(), c.config(id).num_heads - 1);
  const auto prefixed = [](const char* prefix, std::vector<std::string> labels) {
    for (auto& label : labels) label = std::string(prefix) + ":" + label;
    return labels;
  };
  c.page.table(fmt::format("head {}{}, every query against every key:", h,
                           batch_count(scaled) > 1 ? fmt::format(" of batch item {}", b) : ""),
               head_matrix(scaled, b, h), prefixed("Q", c.labels(id.sequence, b, S)),
               prefixed("K", c.labels(key_sequence(id), b, T)));
}

namespace {

const Tensor& matrix_of(const HeadWeights& head, char which) {
  return which == 'q' ? head.W_q : which == 'k' ? head.W_k : head.W_v;
}

}  // namespace

std::optional<RopePairCell> rope_pair_cell(const Tensor& t, const PrintContext& c) {
  // t is (B,H,S,d) or (B,G,S,d), B absent when unbatched
  // d: the numbers RoPE turns (all of a head's, or partial rotary's first r)
  const std::size_t S = t.shape[t.rank() - 2], heads = t.shape[t.rank() - 3], d = c.model.config.rope_dims();
  const std::size_t H = c.model.config.num_heads;
  RopePairCell cell{c.cell_batch(), heads < H ? c.cell_head() / (H / heads) : c.cell_head(),
                    c.options.cell_given || S < 2 ? c.cell_row() : 1, c.cell_column() % (d / 2)};
  if (cell.b >= batch_count(t) || cell.h >= heads || cell.p >= S) return std::nullopt;
  return cell;
}

void print_heads_side_by_side(const char* which, const AttentionWeights& w, PrintContext& c) {
  if (!c.page.full_text()) return;
  const Tensor& fused = which[0] == 'q' ? w.W_q : which[0] == 'k' ? w.W_k : w.W_v;
  c.page.line(fmt::format("the file gives one W_{} per head; side by side, the fused W_{} {}:", which, which,
                          shape_with_axes(fused)));
  NamedTensors matrices;
  for (std::size_t h = 0; h < w.heads.size(); ++h)
    matrices.emplace_back(fmt::format("W_{}^({})", which, h), matrix_of(w.heads[h], which[0]));
  c.page.side_by_side(matrices);
  const std::size_t d = c.model.config.d_head;
  for (std::size_t h = 0; h < w.heads.size(); ++h)
    c.page.line(fmt::format("W_{}[:, {}:{}] == W_{}^({})  (head {} owns these columns)", which, h * d, (h + 1) * d,
                            which, h, h));
}

}  // namespace attn
