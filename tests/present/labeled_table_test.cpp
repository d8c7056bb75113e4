#include "present/labeled_table.h"

#include <stdexcept>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "present/terminal.h"

// Expected tables worked out by hand from the layout in labeled_table.h: row labels padded
// to the widest, " │ ", columns as wide as max(label, number) separated by two spaces, " │",
// the box's rule as wide as the inside (a space, the columns, a space).

namespace {

attn::Tensor matrix(attn::Shape shape, std::vector<double> data) {
  attn::Tensor t(std::move(shape), {"S", "T"});
  t.data.assign(data.begin(), data.end());
  return t;
}

const std::vector<std::string> kTokens = {"I", "love", "AI"};

}  // namespace

TEST_CASE("token labels", "[table]") {
  CHECK(attn::token_label("Q", "love") == "Q:\"love\"");
  CHECK(attn::token_label("", "AI") == "\"AI\"");
  CHECK(attn::token_labels("K", kTokens) == std::vector<std::string>{"K:\"I\"", "K:\"love\"", "K:\"AI\""});
}

TEST_CASE("seed 004's score table: Q:\"I\" x K:\"love\"", "[table]") {
  // The QK^T matrix as seed 004 prints it. Columns are 5, 8 and 6 wide (the labels are
  // wider than "3.79"), so the inside of the box is 1 + 5 + 2 + 8 + 2 + 6 + 1 = 25.
  const attn::Tensor scores = matrix({3, 3}, {3.79, 3.21, 4.89, 3.63, 3.12, 4.63, 4.88, 4.14, 6.33});
  const std::string expected =
      "           K:\"I\"  K:\"love\"  K:\"AI\"\n"
      "         ┌─────────────────────────┐\n"
      "Q:\"I\"    │  3.79      3.21    4.89 │\n"
      "Q:\"love\" │  3.63      3.12    4.63 │\n"
      "Q:\"AI\"   │  4.88      4.14    6.33 │\n"
      "         └─────────────────────────┘\n";
  CHECK(attn::render_labeled_table(scores, attn::token_labels("Q", kTokens), attn::token_labels("K", kTokens)) ==
        expected);
}

TEST_CASE("softmax weights with a Sum column", "[table]") {
  const attn::Tensor weights = matrix({3, 3}, {0.29, 0.21, 0.50, 0.30, 0.23, 0.47, 0.28, 0.19, 0.53});
  attn::LabeledTableOptions options;
  std::vector<double> sums;
  for (std::size_t i = 0; i < 3; ++i)
    sums.push_back(weights.data[3 * i] + weights.data[3 * i + 1] + weights.data[3 * i + 2]);
  options.extra = attn::ExtraColumn{"Sum", sums};
  // NumPy formats this matrix with one digit before the point and two after, padding 0.5 and
  // 0.3 on the right ("0.5 "), as print(np.array(...)) does; the sums print as "1.".
  const std::string expected =
      "           K:\"I\"  K:\"love\"  K:\"AI\"   Sum\n"
      "         ┌─────────────────────────┐\n"
      "Q:\"I\"    │  0.29      0.21    0.5  │  1.\n"
      "Q:\"love\" │  0.3       0.23    0.47 │  1.\n"
      "Q:\"AI\"   │  0.28      0.19    0.53 │  1.\n"
      "         └─────────────────────────┘\n";
  CHECK(attn::render_labeled_table(weights, attn::token_labels("Q", kTokens), attn::token_labels("K", kTokens),
                                   options) == expected);
}

TEST_CASE("one number format for the whole matrix, index labels by default", "[table]") {
  // print(np.array([[-1.5, 0.25], [10, -0.125]])) gives
  //   [[-1.5    0.25 ]
  //    [10.    -0.125]]
  // two characters before the point, three after: every cell is 6 wide.
  const attn::Tensor m = matrix({2, 2}, {-1.5, 0.25, 10, -0.125});
  const std::string expected =
      "         0       1\n"
      "  ┌────────────────┐\n"
      "0 │ -1.5     0.25  │\n"
      "1 │ 10.     -0.125 │\n"
      "  └────────────────┘\n";
  CHECK(attn::render_labeled_table(m, {}, {}) == expected);
}

TEST_CASE("precision is shared by every cell", "[table]") {
  // np.set_printoptions(precision=2); print(np.array([[1.895, 1.605, 2.445]])) gives
  // [[1.9  1.6  2.44]]: the exact binary values are 1.89500000000000001776..., 1.60499999...
  // and 2.44499999..., so the first rounds up to 1.90 (printed "1.9") and the others down.
  const attn::Tensor m = matrix({1, 3}, {1.895, 1.605, 2.445});
  attn::LabeledTableOptions options;
  options.precision = 2;
  CHECK(attn::render_labeled_table(m, {"x"}, {"a", "b", "c"}, options) ==
        "       a     b     c\n"
        "  ┌──────────────────┐\n"
        "x │ 1.9   1.6   2.44 │\n"
        "  └──────────────────┘\n");
}

TEST_CASE("CJK labels line up: columns are measured in display columns", "[table]") {
  attn::Tensor m({2, 2}, {"S", "S"});
  m.data = {1, 2, 3, 4};
  const std::string text = attn::render_labeled_table(m, {"Q:\"我\"", "Q:\"ab\""}, {"K:\"我\"", "K:\"ab\""});
  // Every line of the box is as wide as the others, on screen.
  std::size_t start = 0, width = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    if (line.find("│") != std::string::npos || line.find("┌") != std::string::npos) {
      if (width == 0) width = attn::display_width(line);
      CHECK(attn::display_width(line) == width);
    }
    start = end + 1;
  }
  CHECK(width > 0);
}

TEST_CASE("bad shapes, labels and extra columns are rejected", "[table]") {
  CHECK_THROWS_AS(attn::render_labeled_table(attn::Tensor({3}), {}, {}), attn::InternalError);
  const attn::Tensor m = matrix({2, 2}, {1, 2, 3, 4});
  CHECK_THROWS_AS(attn::render_labeled_table(m, {"a"}, {}), attn::InternalError);
  CHECK_THROWS_AS(attn::render_labeled_table(m, {}, {"a", "b", "c"}), attn::InternalError);
  attn::LabeledTableOptions options;
  options.extra = attn::ExtraColumn{"Sum", {3.0}};
  CHECK_THROWS_AS(attn::render_labeled_table(m, {}, {}, options), attn::InternalError);
}
