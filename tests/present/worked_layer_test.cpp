#include <catch2/catch.hpp>

#include "present/worked_arithmetic.h"

TEST_CASE("the residual's sum and the feed-forward's activation, worked", "[worked]") {
  CHECK(attn::worked_sum_row({0.1, 1.2}, {-2.3645, -6.8794}, "residual1[0]", "X[0]", "attn_out[0]") ==
        "residual1[0] = X[0] + attn_out[0]\n"
        "             = [0.1, 1.2] + [-2.3645, -6.8794]\n"
        "             = [-2.2645, -5.6794]\n");
  CHECK(attn::worked_activation(-0.41, attn::Activation::ReLU, "hidden[0][1]", "z[0][1]") ==
        "hidden[0][1] = ReLU(z[0][1]) = max(0, -0.41) = 0\n");
  // GELU(0.5) = 0.5 · Φ(0.5), Φ(0.5) = (1 + erf(0.5 / √2)) / 2 = 0.69146...: 0.34573
  CHECK(attn::worked_activation(0.5, attn::Activation::GELU, "hidden[0][0]", "z[0][0]") ==
        "hidden[0][0] = GELU(z[0][0]) = z · Φ(z) = 0.5 × (1 + erf(0.5 / √2)) / 2 = 0.5 × 0.6915 = 0.3457\n");
  // GELU_tanh(0.5): √(2/π) · (0.5 + 0.044715 · 0.125) = 0.40340; 0.25 · (1 + tanh(0.40340)) = 0.345714
  CHECK(attn::worked_activation(0.5, attn::Activation::GELUTanh, "hidden[0][0]", "z[0][0]") ==
        "hidden[0][0] = GELU_tanh(z[0][0]) = 0.5 · z · (1 + tanh(√(2/π) · (z + 0.044715 · z³)))\n"
        "             = 0.5 × 0.5 × (1 + tanh(0.4034)) = 0.3457\n");
}

TEST_CASE("SwiGLU's hidden element, worked: SiLU of the gate times the up projection", "[worked]") {
  // SiLU(-1.2) = -1.2 / (1 + e^1.2) = -0.27777; × 0.7 = -0.19444
  CHECK(attn::worked_swiglu(-1.2, 0.7, "hidden[0][0]", "a[0][0]", "u[0][0]") ==
        "hidden[0][0] = SiLU(a[0][0]) · u[0][0] = a / (1 + e^-a) · u = (-1.2) / (1 + e^-(-1.2)) × 0.7 = -0.2778 × 0.7 "
        "= -0.1944\n");
}

TEST_CASE("one RoPE pair turned by hand: the angle, its cos and sin, the two new numbers", "[worked][rope]") {
  // Position 2, pair (0, 2) of d = 4, theta 100: angle = 2 · 100^0 = 2, cos 2 = -0.41615,
  // sin 2 = 0.90930; 0.5 cos 2 - 2 sin 2 = -2.02667, 2 cos 2 + 0.5 sin 2 = -0.37764.
  CHECK(attn::worked_rope_pair(0.5, 2.0, 2, 0, 4, 100.0, {"Q_rope[2]", "Q[2]"}) ==
        "position 2, pair (0, 2): angle = 2 × 100^(-0/4) = 2 × 1 = 2\n"
        "cos = -0.4161, sin = 0.9093\n"
        "Q_rope[2][0] = Q[2][0]·cos - Q[2][2]·sin = 0.5×(-0.4161) - 2×0.9093 = -2.0267\n"
        "Q_rope[2][2] = Q[2][2]·cos + Q[2][0]·sin = 2×(-0.4161) + 0.5×0.9093 = -0.3776\n");
}
