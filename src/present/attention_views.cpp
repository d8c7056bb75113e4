#include "present/attention_views.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "present/array_format.h"
#include "present/heatmap.h"
#include "present/labeled_table.h"
#include "present/tensor_views.h"
#include "present/terminal.h"

namespace attn {

Sequence key_sequence(const StepId& id) {
  return id.block == Block::MaskedSelfAttention ? Sequence::Target : Sequence::Source;
}

const char* projection_letter(StepKind kind) {
  if (kind == StepKind::Query || kind == StepKind::QueryHeads) return "q";
  if (kind == StepKind::Key || kind == StepKind::KeyHeads) return "k";
  return "v";
}

void print_heatmaps(const Tensor& weights, const StepId& id, PrintContext& c) {
  if (!c.options.views || !c.page.full_text()) return;
  const std::size_t S = weights.shape[weights.rank() - 2], T = weights.shape.back();
  if (S > 16 || T > 16) {
    c.page.line(fmt::format("(heatmap left out: {}x{} is larger than 16x16)", S, T));
    return;
  }
  HeatmapOptions h;
  h.style = c.options.heatmap_style.value_or(c.options.color ? HeatmapStyle::Color : HeatmapStyle::Shade);
  h.depth = c.options.color_depth;
  const std::size_t B = batch_count(weights), H = c.model.config.num_heads;
  for (std::size_t b = 0; b < B; ++b) {
    if (c.options.filter.batch && b != *c.options.filter.batch) continue;
    std::vector<Tensor> heads;
    std::vector<std::string> titles;
    for (std::size_t head = 0; head < H; ++head) {
      if (c.options.filter.head && head != *c.options.filter.head) continue;
      heads.push_back(head_matrix(weights, b, head));
      titles.push_back(fmt::format("head {}", head));
    }
    c.page.line(fmt::format("heatmap{}: rows are queries, columns keys; the arrow marks each row's strongest key",
                            B > 1 ? fmt::format(" of batch item {}", b) : std::string()));
    c.page.indented(
        render_heatmaps_side_by_side(heads, titles, c.labels(id.sequence, b, S), c.labels(key_sequence(id), b, T), h));
  }
}

void print_labeled_scores(const Tensor& scaled, const StepId& id, PrintContext& c) {
  if (!c.options.views || !c.page.full_text()) return;
  const std::size_t S = scaled.shape[scaled.rank() - 2], T = scaled.shape.back();
  if (S > 12 || T > 12) return;
  const std::size_t b = std::min(c.cell_batch(), batch_count(scaled) - 1);
  const std::size_t h = std::min(c.cell_head(), c.model.config.num_heads - 1);
  LabeledTableOptions table;
  table.precision = c.options.array.precision;
  c.page.line(fmt::format("head {}{}, every query against every key:", h,
                          batch_count(scaled) > 1 ? fmt::format(" of batch item {}", b) : ""));
  c.page.indented(render_labeled_table(head_matrix(scaled, b, h), token_labels("Q", c.labels(id.sequence, b, S)),
                                       token_labels("K", c.labels(key_sequence(id), b, T)), table));
}

namespace {

// The lines of text blocks placed side by side, three spaces apart, indented by two.
std::string side_by_side(const std::vector<std::vector<std::string>>& columns) {
  std::size_t rows = 0;
  std::vector<std::size_t> widths;
  for (const auto& column : columns) {
    rows = std::max(rows, column.size());
    std::size_t widest = 0;
    for (const auto& l : column) widest = std::max(widest, display_width(l));
    widths.push_back(widest);
  }
  std::string text;
  for (std::size_t r = 0; r < rows; ++r) {
    std::string row = "  ";
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string cell = r < columns[i].size() ? columns[i][r] : "";
      row += cell + std::string(widths[i] - display_width(cell) + 3, ' ');
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    text += row + "\n";
  }
  return text;
}

const Tensor& matrix_of(const HeadWeights& head, char which) {
  return which == 'q' ? head.W_q : which == 'k' ? head.W_k : head.W_v;
}

}  // namespace

void print_heads_side_by_side(const char* which, const AttentionWeights& w, PrintContext& c) {
  if (!c.page.full_text()) return;
  const Tensor& fused = which[0] == 'q' ? w.W_q : which[0] == 'k' ? w.W_k : w.W_v;
  c.page.line(fmt::format("the file gives one W_{} per head; side by side they are the fused W_{} {}:", which, which,
                          shape_with_axes(fused)));
  std::vector<std::vector<std::string>> columns;
  for (std::size_t h = 0; h < w.heads.size(); ++h) {
    std::istringstream text(fmt::format("W_{}^({})\n", which, h) +
                            format_array(matrix_of(w.heads[h], which[0]), c.options.array));
    std::vector<std::string> lines;
    for (std::string l; std::getline(text, l);) lines.push_back(l);
    columns.push_back(lines);
  }
  c.page.raw(side_by_side(columns));
  const std::size_t d = c.model.config.d_head;
  for (std::size_t h = 0; h < w.heads.size(); ++h)
    c.page.line(fmt::format("W_{}[:, {}:{}] == W_{}^({})  (head {} owns these columns)", which, h * d, (h + 1) * d,
                            which, h, h));
}

}  // namespace attn
