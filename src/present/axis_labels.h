// Labels for the rows and columns of a printed table or heatmap.
#ifndef ATTN_PRESENT_AXIS_LABELS_H_
#define ATTN_PRESENT_AXIS_LABELS_H_

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include "attn/error.h"
#include "attn/tensor.h"

namespace attn {

// `labels` when given (one per row or column, else InternalError naming `caller`),
// or the indices "0", "1", ... when there are none (a model without a vocabulary).
inline std::vector<std::string> labels_or_indices(const std::vector<std::string>& labels, std::size_t count,
                                                  const char* which, const char* caller) {
  if (labels.empty()) {
    std::vector<std::string> indices;
    for (std::size_t i = 0; i < count; ++i) indices.push_back(std::to_string(i));
    return indices;
  }
  if (labels.size() != count)
    throw InternalError(fmt::format("{}: {} {} labels for {} {}s", caller, labels.size(), which, count, which));
  return labels;
}

// A 2-D matrix with a label for every row and column: what the heatmap and the labelled
// table draw. InternalError naming `caller` when the matrix is not 2-D or labels are missing.
struct LabeledMatrix {
  std::size_t rows, columns;
  std::vector<std::string> row_labels, column_labels;
};
inline LabeledMatrix labeled_matrix(const Tensor& matrix, const std::vector<std::string>& row_labels,
                                    const std::vector<std::string>& column_labels, const char* caller) {
  if (matrix.rank() != 2)
    throw InternalError(fmt::format("{}: expected a 2-D matrix, got shape {}", caller, shape_string(matrix.shape)));
  const std::size_t rows = matrix.dim(0), columns = matrix.dim(1);
  return {rows, columns, labels_or_indices(row_labels, rows, "row", caller),
          labels_or_indices(column_labels, columns, "column", caller)};
}

}  // namespace attn

#endif  // ATTN_PRESENT_AXIS_LABELS_H_
