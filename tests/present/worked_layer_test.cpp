#include <catch2/catch.hpp>

#include "present/worked_arithmetic.h"

TEST_CASE("the residual's sum and the feed-forward's activation, worked", "[worked]") {
  CHECK(attn::worked_sum_row({0.1, 1.2}, {-2.3645, -6.8794}, "residual1[0]", "X[0]", "attn_out[0]") ==
        "residual1[0] = X[0] + attn_out[0]\n"
        "             = [0.1, 1.2] + [-2.3645, -6.8794]\n"
        "             = [-2.2645, -5.6794]\n");
  CHECK(attn::worked_activation(-0.41, true, "hidden[0][1]", "z[0][1]") ==
        "hidden[0][1] = ReLU(z[0][1]) = max(0, -0.41) = 0\n");
  // GELU(0.5) = 0.5 · Φ(0.5), Φ(0.5) = (1 + erf(0.5 / √2)) / 2 = 0.69146...: 0.34573
  CHECK(attn::worked_activation(0.5, false, "hidden[0][0]", "z[0][0]") ==
        "hidden[0][0] = GELU(z[0][0]) = z · Φ(z) = 0.5 × (1 + erf(0.5 / √2)) / 2 = 0.5 × 0.6915 = 0.3457\n");
}
