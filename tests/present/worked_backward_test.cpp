#include "present/worked_backward.h"

#include <string>

#include <catch2/catch.hpp>

#include "attn/error.h"

TEST_CASE("the softmax's backward, one row worked out", "[worked_backward]") {
  // w = [0.2, 0.3, 0.5], dw = [1, 0, 0]: Σ = 0.2, dw - Σ = [0.8, -0.2, -0.2]
  const std::string text = attn::worked_softmax_backward_row({0.2, 0.3, 0.5}, {1, 0, 0}, "dL/dscaled[0]");
  CHECK(text ==
        "dL/dscaled[0] = w ⊙ (dw - Σ_j dw_j·w_j), w the weights, dw = dL/dw\n"
        "  w             = [0.2, 0.3, 0.5]\n"
        "  dw            = [1, 0, 0]\n"
        "  Σ             = 1×0.2 + 0×0.3 + 0×0.5 = 0.2 + 0.0 + 0.0 = 0.2\n"
        "  dw - Σ        = [1 - 0.2, 0 - 0.2, 0 - 0.2] = [0.8, -0.2, -0.2]\n"
        "  dL/dscaled[0] = [0.2×0.8, 0.3×(-0.2), 0.5×(-0.2)] = [0.16, -0.06, -0.10]\n"
        // One line per paragraph (the page wraps it at the terminal's width)
        "  Why: raising one score raises its weight and lowers all the others (they still sum to 1), "
        "so each score's gradient is its weight times how much its dL/dw beats the average Σ.\n");
  // a fully masked row: nothing flows back, and the text says so
  CHECK(attn::worked_softmax_backward_row({0, 0}, {1, 2}, "r").find("the row passes no gradient back") !=
        std::string::npos);
}

TEST_CASE("the cross-entropy, position by position, and one row of its gradient", "[worked_backward]") {
  const std::string loss = attn::worked_cross_entropy(
      {{"position 0", "a", 0.5, false}, {"position 1", "<PAD>", 0.9, true}, {"position 2", "b", 0.25, false}},
      (0.6931471805599453 + 1.3862943611198906) / 2);
  CHECK(loss ==
        "  position 0  label \"a\": p = 0.5, -log p = 0.6931\n"
        "  position 1  label \"<PAD>\": ignored\n"
        "  position 2  label \"b\": p = 0.25, -log p = 1.3863\n"
        "  L = (0.6931 + 1.3863) / 2 = 1.0397\n");
  const std::string row = attn::worked_cross_entropy_gradient_row({0.5, 0.25, 0.25}, 1, "b", 2, "dL/dlogits[0]");
  CHECK(row.find("at the label:  (p[1] - 1) / n = (0.25 - 1) / 2 = -0.375\n") != std::string::npos);
  CHECK(row.find("elsewhere:     p[j] / n, as p[0] / n = 0.5 / 2 = 0.25\n") != std::string::npos);
  CHECK(row.find("dL/dlogits[0] = [0.250, -0.375, 0.125]\n") != std::string::npos);
}

TEST_CASE("RoPE backward, one pair: the gradient turned back by the angle", "[worked_backward][rope]") {
  // Position 2, pair (0, 2) of d = 4, theta 100: angle 2, cos 2 = -0.416147, sin 2 = 0.909297.
  // dx[0] = 0.5·cos + 2·sin = -0.208073 + 1.818595 = 1.610521
  // dx[2] = 2·cos - 0.5·sin = -0.832294 - 0.454649 = -1.286942
  CHECK(attn::worked_rope_pair_backward(0.5, 2.0, 2, 0, 4, 100.0, {"dL/dQ[2]", "dL/dQ_rope[2]"}) ==
        "position 2, pair (0, 2): angle = 2 × 100^(-0/4) = 2 × 1 = 2\n"
        "cos = -0.4161, sin = 0.9093\n"
        "dL/dQ[2][0] = dL/dQ_rope[2][0]·cos + dL/dQ_rope[2][2]·sin = 0.5×(-0.4161) + 2×0.9093 = 1.6105\n"
        "dL/dQ[2][2] = dL/dQ_rope[2][2]·cos - dL/dQ_rope[2][0]·sin = 2×(-0.4161) - 0.5×0.9093 = -1.2869\n"
        "  Why: the forward turned the pair by the angle; its gradient goes back "
        "through the transposed rotation, a turn by minus the angle.\n");
  // A rotation's transpose is its inverse: the forward's (-2.026668, -0.377645) of
  // (0.5, 2) at this angle (worked_layer_test.cpp) goes back to (0.5, 2).
  const std::string back = attn::worked_rope_pair_backward(-2.0266682, -0.3776450, 2, 0, 4, 100.0, {"x", "y"});
  CHECK(back.find("= 0.5\n") != std::string::npos);
  CHECK(back.find("= 2\n") != std::string::npos);
}

TEST_CASE("repeat_kv backward, one element: the sum of the query heads' gradients", "[worked_backward]") {
  // 0.25 - 0.75 + 1.5 = 1
  CHECK(attn::worked_repeat_kv_backward({0.25, -0.75, 1.5}, {"dK_rep[0][1]", "dK_rep[1][1]", "dK_rep[2][1]"},
                                        "dK[0][1]", "the 3 query heads 0 to 2") ==
        "dK[0][1] = dK_rep[0][1] + dK_rep[1][1] + dK_rep[2][1]\n"
        "         = 0.25 - 0.75 + 1.50 = 1\n"
        "  Why: the 3 query heads 0 to 2 each read a copy of this head, "
        "so each copy's gradient comes back to it, and they add up.\n");
  CHECK_THROWS_AS(attn::worked_repeat_kv_backward({1.0}, {}, "r", "h"), attn::InternalError);
}
