// The loss curve attn train draws: columns of eighths of a row, scaled to the largest loss.
#include "attn/loss_curve.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

TEST_CASE("the loss curve, worked by hand in ASCII and in eighths", "[present][loss_curve]") {
  // Losses 4, 2, 1, 0 over 2 rows: each column is (loss / 4) x 16 eighths high, so 16, 8, 4
  // and 0 eighths: the top row holds the first column's second 8, the bottom row 8, 8, 4, 0.
  attn::LossCurveOptions ascii;
  ascii.height = 2;
  ascii.unicode = false;
  CHECK(attn::loss_curve({4, 2, 1, 0}, ascii) ==
        "loss 4 +#   \n"
        "     0 +### \n"
        "       +----\n"
        "        1 step 4\n");
  attn::LossCurveOptions blocks = ascii;
  blocks.unicode = true;
  CHECK(attn::loss_curve({4, 2, 1, 0}, blocks) ==
        "loss 4 ┤█   \n"
        "     0 ┤██▄ \n"
        "       └────\n"
        "        1 step 4\n");
  CHECK(attn::loss_curve({}, blocks).empty());
}

TEST_CASE("more steps than columns: each column is the mean of its run of steps", "[present][loss_curve]") {
  // The plot is at least 10 columns wide (width 12 asks for fewer): 20 steps make 10 columns of
  // 2 steps, means 4, 2, 2 (of 1 and 3), then 0s -> 16, 8, 8, 0... eighths over 2 rows.
  attn::LossCurveOptions o;
  o.height = 2;
  o.unicode = false;
  o.width = 12;
  std::vector<double> losses = {4, 4, 2, 2, 1, 3};
  losses.resize(20, 0.0);
  CHECK(attn::loss_curve(losses, o) ==
        "loss 4 +#         \n"
        "     0 +###       \n"
        "       +----------\n"
        "        1  step 20\n");  // "step 20" ends under the last column
}
