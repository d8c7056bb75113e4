#include "present/labeled_table.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/error.h"
#include "present/array_format.h"
#include "present/axis_labels.h"
#include "present/terminal.h"

namespace attn {

std::string token_label(std::string_view prefix, std::string_view token) {
  return (prefix.empty() ? std::string() : std::string(prefix) + ":") + "\"" + std::string(token) + "\"";
}

std::vector<std::string> token_labels(std::string_view prefix, const std::vector<std::string>& tokens) {
  std::vector<std::string> labels;
  for (const auto& token : tokens) labels.push_back(token_label(prefix, token));
  return labels;
}

namespace {

std::string repeat(std::string_view piece, std::size_t times) {
  std::string out;
  for (std::size_t i = 0; i < times; ++i) out += piece;
  return out;
}

}  // namespace

std::string render_labeled_table(const Tensor& matrix, const std::vector<std::string>& row_labels_in,
                                 const std::vector<std::string>& column_labels_in, const LabeledTableOptions& options) {
  // Named, not a structured binding: the lambdas below capture these (clang refuses
  // to capture a binding in C++17).
  const LabeledMatrix labeled = labeled_matrix(matrix, row_labels_in, column_labels_in, "labeled table");
  const std::size_t rows = labeled.rows, columns = labeled.columns;
  const std::vector<std::string>& row_labels = labeled.row_labels;
  const std::vector<std::string>& column_labels = labeled.column_labels;
  if (options.extra && options.extra->values.size() != rows)
    throw InternalError(fmt::format("labeled table: extra column \"{}\" has {} values for {} rows",
                                    options.extra->title, options.extra->values.size(), rows));

  // One format for the whole matrix (NumPy's per-array choice): every cell has the same width.
  const FloatFormatter format(matrix.data, options.precision, options.suppress_small);
  std::vector<std::string> cells(matrix.data.size());
  for (std::size_t k = 0; k < cells.size(); ++k) cells[k] = format(matrix.data[k]);

  std::size_t row_label_width = 0;
  for (const auto& label : row_labels) row_label_width = std::max(row_label_width, display_width(label));
  std::vector<std::size_t> width(columns);
  for (std::size_t j = 0; j < columns; ++j) {
    width[j] = display_width(column_labels[j]);
    for (std::size_t i = 0; i < rows; ++i) width[j] = std::max(width[j], display_width(cells[i * columns + j]));
  }
  std::size_t inner = 2;  // a space inside each side of the box
  for (std::size_t j = 0; j < columns; ++j) inner += width[j] + (j ? 2 : 0);

  std::vector<std::string> extra_cells;
  std::size_t extra_width = 0;
  if (options.extra) {
    const FloatFormatter extra_format(options.extra->values, options.precision, options.suppress_small);
    extra_width = display_width(options.extra->title);
    for (double v : options.extra->values) {
      extra_cells.push_back(extra_format(v));
      extra_width = std::max(extra_width, display_width(extra_cells.back()));
    }
  }

  const std::string margin(row_label_width, ' ');
  std::string out = margin + "   ";
  for (std::size_t j = 0; j < columns; ++j) out += (j ? "  " : "") + pad_left(column_labels[j], width[j]);
  if (options.extra) out += "   " + pad_left(options.extra->title, extra_width);
  out += "\n";
  out += margin + " ┌" + repeat("─", inner) + "┐\n";
  for (std::size_t i = 0; i < rows; ++i) {
    out += pad_right(row_labels[i], row_label_width) + " │ ";
    for (std::size_t j = 0; j < columns; ++j) out += (j ? "  " : "") + pad_left(cells[i * columns + j], width[j]);
    out += " │";
    if (options.extra) out += " " + pad_left(extra_cells[i], extra_width);
    out += "\n";
  }
  out += margin + " └" + repeat("─", inner) + "┘\n";
  return out;
}

}  // namespace attn
