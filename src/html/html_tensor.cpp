#include "html/html_tensor.h"

#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "html/html_text.h"
#include "present/array_format.h"

namespace attn {

namespace {

using NumberText = std::function<std::string(double)>;

std::string trimmed(const std::string& text) {
  const std::size_t first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

// Every number of one array in the one format NumPy would choose for the values shown.
NumberText number_text(const std::vector<double>& shown, int precision, bool suppress_small, bool integers) {
  if (integers) return [](double v) { return std::to_string(static_cast<long long>(v)); };
  auto format = std::make_shared<FloatFormatter>(shown, precision, suppress_small);
  return [format](double v) { return trimmed((*format)(v)); };
}

// Whether index k of `shown` follows a gap (the summarized part of the axis).
bool after_gap(const std::vector<std::size_t>& shown, std::size_t k) { return k > 0 && shown[k] != shown[k - 1] + 1; }

struct MatrixPlace {
  std::size_t offset = 0;  // of its first element in t.data
  std::string caption;     // "Q_heads[0][1]", or "" for a matrix alone
  bool summarize = false;
};

// One matrix of the last two axes (a row for a vector, a cell for a scalar).
std::string matrix_table(const Tensor& t, const MatrixPlace& place, std::size_t edge, const NumberText& text) {
  const std::size_t r = t.rank();
  const std::size_t rows = r >= 2 ? t.shape[r - 2] : 1, columns = r >= 1 ? t.shape[r - 1] : 1;
  const auto row_index = shown_indices(rows, place.summarize, edge);
  const auto column_index = shown_indices(columns, place.summarize, edge);
  std::string out = "<table class=\"tensor\">";
  if (!place.caption.empty()) out += "<caption>" + escaped(place.caption) + "</caption>";
  const std::string corner = r >= 2 ? t.axes[r - 2] + " \\ " + t.axes[r - 1] : r == 1 ? t.axes[0] : "";
  out += "<thead><tr><th class=\"corner\">" + escaped(corner) + "</th>";
  for (std::size_t k = 0; k < column_index.size(); ++k)
    out += (after_gap(column_index, k) ? "<th class=\"gap\">…</th>" : "") + fmt::format("<th>{}</th>", column_index[k]);
  out += "</tr></thead><tbody>\n";
  for (std::size_t i = 0; i < row_index.size(); ++i) {
    if (after_gap(row_index, i))
      out += fmt::format("<tr class=\"gap\"><th>⋮</th><td colspan=\"{}\">⋮</td></tr>\n",
                         column_index.size() + (column_index.size() != columns));
    out += r >= 2 ? fmt::format("<tr><th>{}</th>", row_index[i]) : "<tr><th></th>";
    for (std::size_t k = 0; k < column_index.size(); ++k) {
      if (after_gap(column_index, k)) out += "<td class=\"gap\">…</td>";
      out += "<td>" + escaped(text(t.data[place.offset + row_index[i] * columns + column_index[k]])) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

// The index of each matrix of the leading axes (all but the last two), in order; nullopt
// where a summarized axis leaves a gap.
void leading_indices(const Tensor& t, std::size_t axis, std::vector<std::size_t>& index, bool summarize,
                     std::size_t edge, std::vector<std::optional<std::vector<std::size_t>>>& out) {
  if (axis + 2 >= t.rank()) {
    out.emplace_back(index);
    return;
  }
  const auto shown = shown_indices(t.shape[axis], summarize, edge);
  for (std::size_t k = 0; k < shown.size(); ++k) {
    if (after_gap(shown, k)) out.emplace_back(std::nullopt);
    index.push_back(shown[k]);
    leading_indices(t, axis + 1, index, summarize, edge, out);
    index.pop_back();
  }
}

std::string tables(const Tensor& t, const std::string& label, const ArrayFormatOptions& options, bool summarize) {
  if (t.size() == 0) return "<p class=\"empty\">(no elements)</p>\n";
  ArrayFormatOptions shown_options = options;
  if (!summarize) shown_options.threshold = t.size();
  const NumberText text =
      number_text(shown_values(t, shown_options), options.precision, options.suppress_small, options.integers);
  std::vector<std::optional<std::vector<std::size_t>>> matrices;
  std::vector<std::size_t> index;
  leading_indices(t, 0, index, summarize, options.edge_items, matrices);
  const std::size_t matrix_size = t.rank() >= 2 ? t.shape[t.rank() - 2] * t.shape[t.rank() - 1] : t.size();
  std::string out;
  for (const auto& m : matrices) {
    if (!m) {
      out += "<p class=\"gap\">⋮</p>\n";
      continue;
    }
    MatrixPlace place;
    place.summarize = summarize;
    std::size_t flat = 0;
    for (std::size_t a = 0; a < m->size(); ++a) {
      flat = flat * t.shape[a] + (*m)[a];
      place.caption += fmt::format("[{}]", (*m)[a]);
    }
    place.offset = flat * matrix_size;
    if (!place.caption.empty()) place.caption = label + place.caption;
    out += matrix_table(t, place, options.edge_items, text);
  }
  return out;
}

}  // namespace

std::string tensor_tables(const Tensor& t, const std::string& label, const ArrayFormatOptions& options) {
  return tables(t, label, options, t.size() > options.threshold);
}

std::string tensor_figure(const ShownTensor& shown, const std::string& stats, const ArrayFormatOptions& options,
                          std::size_t whole_limit) {
  const Tensor& t = shown.tensor;
  ArrayFormatOptions array = options;
  array.integers = shown.integers;
  array.threshold = shown.threshold;
  const std::string name = shown.label + shown.slice;
  std::string out = "<figure class=\"tensor\"><figcaption>";
  if (!name.empty()) out += "<code>" + escaped(name) + "</code> ";
  out += "<span class=\"shape\">" + escaped(shape_with_axes(t)) + "</span></figcaption>\n";
  if (!stats.empty()) out += element("p", "stats", stats);
  out += "<div class=\"scroll\">" + tensor_tables(t, name, array) + "</div>\n";
  if (t.size() > array.threshold) {
    if (t.size() <= whole_limit)
      out += fmt::format("<details class=\"whole\"><summary>the whole tensor: all {} numbers</summary>", t.size()) +
             "<div class=\"scroll\">" + tables(t, name, array, false) + "</div></details>\n";
    else
      out +=
          element("p", "note",
                  fmt::format("(the whole tensor, {} numbers, is too large for the page: --dump writes it)", t.size()));
  }
  return out + "</figure>\n";
}

std::string labeled_matrix(const std::string& caption, const Tensor& matrix, const std::vector<std::string>& rows,
                           const std::vector<std::string>& columns, int precision) {
  const NumberText text = number_text(to_vector(matrix.data), precision, true, false);
  const std::size_t n = matrix.shape.at(1);
  std::string out =
      "<div class=\"scroll\"><table class=\"labeled\"><caption>" + escaped(caption) + "</caption><thead><tr><th></th>";
  for (const auto& c : columns) out += "<th>" + escaped(c) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out += "<tr><th>" + escaped(rows[i]) + "</th>";
    for (std::size_t j = 0; j < n; ++j) out += "<td>" + escaped(text(matrix.data[i * n + j])) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string top_k_table(const TopKView& view) {
  std::string out =
      "<div class=\"scroll\"><table class=\"top-k\"><caption>" + escaped(view.caption) + "</caption><tbody>\n";
  for (std::size_t r = 0; r < view.rows.size(); ++r) {
    out += "<tr><th>" + escaped(view.row_labels[r]) + "</th>";
    for (const auto& [token, value] : view.rows[r])
      out += fmt::format("<td><span class=\"token\">{}</span> {:.{}f}</td>", escaped(token), value, view.decimals);
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

std::string word_table(const TextTable& table) {
  std::string out = "<div class=\"scroll\"><table class=\"words\">";
  if (!table.caption.empty()) out += "<caption>" + escaped(table.caption) + "</caption>";
  out += "<thead><tr>";
  for (const std::string& h : table.header) out += "<th>" + escaped(h) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      out += (i ? "<td>" : "<th>") + escaped(row[i]) + (i ? "</td>" : "</th>");
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

}  // namespace attn
