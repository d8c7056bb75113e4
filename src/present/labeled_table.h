// A 2-D slice as a boxed table with token labels on its rows and columns, the way the seed
// documents draw score and weight matrices:
//
//              K:"I"  K:"love"    K:"AI"
//           ┌──────────────────────────────┐
//   Q:"I"   │ 1.895    1.605     2.445     │ 1.
//   ...
//
// Every number is formatted by one attn::FloatFormatter over the whole matrix, so the table
// uses the same per-array number format NumPy would print the matrix with. An optional
// extra column after the box (e.g. "Sum" of each softmax row) has its own formatter.
#ifndef ATTN_PRESENT_LABELED_TABLE_H_
#define ATTN_PRESENT_LABELED_TABLE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/error.h"
#include "attn/tensor.h"

namespace attn {

// One value per row, printed right of the box under `title`.
struct ExtraColumn {
  std::string title;           // "Sum"
  std::vector<double> values;  // one per row
};

struct LabeledTableOptions {
  int precision = 4;                 // at most this many digits after the point (NumPy's precision)
  bool suppress_small = true;        // NumPy's suppress
  std::optional<ExtraColumn> extra;  // printed right of the box
};

// `prefix` + the token in double quotes: token_label("Q", "I") == "Q:\"I\"".
std::string token_label(std::string_view prefix, std::string_view token);

// token_label(prefix, tokens[i]) for each token.
std::vector<std::string> token_labels(std::string_view prefix, const std::vector<std::string>& tokens);

// The (rows, columns) matrix as a boxed table. Labels default to the indices "0", "1", ...
// when empty; otherwise their counts must match (InternalError, also when the
// matrix is not 2-D or the extra column has the wrong length). Column labels and numbers are
// right-aligned in columns as wide as the wider of the two; the result ends with a newline.
std::string render_labeled_table(const Tensor& matrix, const std::vector<std::string>& row_labels,
                                 const std::vector<std::string>& column_labels,
                                 const LabeledTableOptions& options = {});

}  // namespace attn

#endif  // ATTN_PRESENT_LABELED_TABLE_H_
