#include "present/worked_arithmetic.h"

#include <cmath>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "attn/error.h"

#include "steps/layer_norm.h"
#include "steps/positional_encoding.h"

// Reference numbers come from the seed documents (where their arithmetic is right), from
// tests/reference/make_worked_arithmetic_cases.py (NumPy 1.24 / PyTorch 1.13), or are worked
// by hand in the comments.

namespace {

attn::Tensor matrix(attn::Shape shape, attn::AxisNames axes, std::vector<double> data) {
  attn::Tensor t(std::move(shape), std::move(axes));
  t.data.assign(data.begin(), data.end());
  return t;
}

// Seed 004's input row X[0] = "love" + PE(1) = [1.34, 0.64, 0.81, 1.20] (the seed labels it
// "I" at position 0, but its own step 2 adds PE(1) to "love" to get these numbers).
const attn::Tensor kX = matrix({1, 4}, {"S", "N"}, {1.34, 0.64, 0.81, 1.20});
// Seed 004's Wq.
const attn::Tensor kWq =
    matrix({4, 4}, {"N", "H*d"}, {0.1, 0.2, 0.3, 0.4, 0.5, 0.1, 0.2, 0.3, 0.2, 0.3, 0.1, 0.5, 0.4, 0.2, 0.5, 0.1});
// Seed 004's step-4 Q, K, V ("I love AI", d_k = 4).
const attn::Tensor kQ =
    matrix({3, 4}, {"S", "d"}, {1.10, 0.82, 1.10, 0.89, 1.18, 0.73, 0.98, 0.85, 1.42, 1.12, 1.23, 1.35});
const attn::Tensor kK =
    matrix({3, 4}, {"T", "d"}, {1.05, 0.95, 0.78, 1.12, 1.02, 0.68, 0.72, 0.92, 1.38, 1.28, 1.05, 1.42});
const attn::Tensor kV =
    matrix({3, 4}, {"T", "d"}, {0.98, 0.88, 1.02, 0.75, 0.85, 0.72, 0.95, 0.68, 1.25, 1.15, 1.32, 1.08});

std::string last_line(const std::string& text) {
  const auto end = text.size() - 1;  // the final newline
  return text.substr(text.rfind('\n', end - 1) + 1, end - text.rfind('\n', end - 1) - 1);
}

}  // namespace

TEST_CASE("number groups share their digits, like NumPy's maxprec_equal", "[worked]") {
  using V = std::vector<std::string>;
  // np.array2string(..., floatmode="maxprec_equal", precision=4) gives [0.134, 0.320, 0.162, 0.480].
  CHECK(attn::format_number_group({0.134, 0.32, 0.162, 0.48}, 4) == V{"0.134", "0.320", "0.162", "0.480"});
  CHECK(attn::format_number_group({1.34, 0.64, 0.81, 1.2}, 4) == V{"1.34", "0.64", "0.81", "1.20"});
  CHECK(attn::format_number_group({std::sin(1.0), std::cos(1.0), std::sin(0.01), std::cos(0.01)}, 3) ==
        V{"0.841", "0.540", "0.010", "1.000"});
  CHECK(attn::format_number_group({-0.55, -0.84, 0.0}, 4) == V{"-0.55", "-0.84", "0.00"});
  // NumPy prints whole numbers as "2." and "100."; worked arithmetic drops the point.
  CHECK(attn::format_number_group({2.0, 100.0}, 4) == V{"2", "100"});
  CHECK(attn::format_number_group({0.99995}, 4) == V{"1"});  // NumPy: [1.]
  CHECK(attn::format_number_group({-0.00001, -INFINITY, NAN}, 2) == V{"-1e-05", "-inf", "nan"});
  CHECK(attn::format_worked_number(1.0960000000000001, 4) == "1.096");
}

TEST_CASE("a value too small for the digits shows two significant digits, never a 0 that is not 0", "[worked]") {
  using V = std::vector<std::string>;
  // Python: "%.2g" % 8.8e-05 == "8.8e-05", "%.2g" % 0.00031 == "0.00031". At 4 digits they
  // would print as 0.0001 and 0.0003 (one significant digit); the others keep the group's
  // digits, counted without them (0.5, not 0.5000).
  CHECK(attn::format_number_group({8.8e-05, 0.5, 0.00031, -2.5e-07, 0.0}, 4) ==
        V{"8.8e-05", "0.5", "0.00031", "-2.5e-07", "0.0"});
  CHECK(attn::format_worked_number(0.0012, 4) == "0.0012");  // two significant digits: fixed
  // Softmax weights keep their fixed digits; one that would print 0.0000 does not.
  CHECK(attn::format_fixed_group({1e-07, 0.25, 0.0}, 4) == V{"1e-07", "0.2500", "0.0000"});
}

TEST_CASE("seed 004's Q[0][0] and Q[0][1], digit for digit", "[worked]") {
  CHECK(attn::worked_projection_cell(kX, kWq, attn::Tensor(), 0, 0, "Q", "X", "W_q") ==
        "Q[0][0] = X[0] · W_q[:,0]\n"
        "        = 1.34×0.1 + 0.64×0.5 + 0.81×0.2 + 1.20×0.4\n"
        "        = 0.134 + 0.320 + 0.162 + 0.480\n"
        "        = 1.096\n");
  CHECK(attn::worked_projection_cell(kX, kWq, attn::Tensor(), 0, 1, "Q", "X", "W_q") ==
        "Q[0][1] = X[0] · W_q[:,1]\n"
        "        = 1.34×0.2 + 0.64×0.1 + 0.81×0.3 + 1.20×0.2\n"
        "        = 0.268 + 0.064 + 0.243 + 0.240\n"
        "        = 0.815\n");
}

TEST_CASE("seed 004's Q[0] slips in its last two cells", "[worked]") {
  // The seed prints Q[0] = [1.10, 0.82, 1.10, 0.89], but X[0] · Wq (NumPy) is
  // [1.096, 0.815, 1.211, 1.253]: Q[0][2] = 0.402 + 0.128 + 0.081 + 0.600 = 1.211 and
  // Q[0][3] = 0.536 + 0.192 + 0.405 + 0.120 = 1.253.
  const std::string q02 = attn::worked_projection_cell(kX, kWq, attn::Tensor(), 0, 2, "Q", "X", "W_q");
  CHECK(q02.find("= 0.402 + 0.128 + 0.081 + 0.600\n") != std::string::npos);
  CHECK(last_line(q02) == "        = 1.211");
  CHECK(last_line(attn::worked_projection_cell(kX, kWq, attn::Tensor(), 0, 3, "Q", "X", "W_q")) == "        = 1.253");
}

TEST_CASE("a projection cell with a bias adds it as the last term", "[worked]") {
  attn::Tensor bias({4}, {"H*d"});
  bias.data = {0.5, -0.25, 0.0, 1.0};
  // 0.815 - 0.25 = 0.565
  CHECK(attn::worked_projection_cell(kX, kWq, bias, 0, 1, "Q", "X", "W_q", "b_q") ==
        "Q[0][1] = X[0] · W_q[:,1] + b_q[1]\n"
        "        = 1.34×0.2 + 0.64×0.1 + 0.81×0.3 + 1.20×0.2 - 0.25\n"
        "        = 0.268 + 0.064 + 0.243 + 0.240 - 0.25\n"
        "        = 0.565\n");
}

TEST_CASE("seed 000's 'what happens internally' with negative factors bracketed", "[worked]") {
  // [-1.5116, 1.5644, 2.1816, 3.3755] @ W[:, 0] with W[:, 0] = [0.1, 0.5, 0.9, 1.3]; NumPy:
  // products [-0.1512, 0.7822, 1.9634, 4.3882], sum 6.98263.
  attn::DotProductNames names;
  names.result = "out[0][0][0]";
  CHECK(attn::worked_dot_product(names, {-1.5116, 1.5644, 2.1816, 3.3755}, {0.1, 0.5, 0.9, 1.3}) ==
        "out[0][0][0] = (-1.5116)×0.1 + 1.5644×0.5 + 2.1816×0.9 + 3.3755×1.3\n"
        "             = -0.1512 + 0.7822 + 1.9634 + 4.3882\n"
        "             = 6.9826\n");
}

TEST_CASE("score cells: seed 004's QK^T[0][0] is right, [0][1] is not", "[worked]") {
  // Seed: (1.10 × 1.05) + (0.82 × 0.95) + (1.10 × 0.78) + (0.89 × 1.12) = 1.155 + 0.779 +
  // 0.858 + 0.997 = 3.79. The exact last product is 0.9968, so the terms print with 4 digits.
  CHECK(attn::worked_score_cell(kQ, kK, 0, 0) ==
        "scores[0][0] = Q[0] · K[0]\n"
        "             = 1.10×1.05 + 0.82×0.95 + 1.10×0.78 + 0.89×1.12\n"
        "             = 1.1550 + 0.7790 + 0.8580 + 0.9968\n"
        "             = 3.7888\n");
  // The seed's table says QK^T[0][1] = 3.21; Q[0] · K[1] is 3.2904 (NumPy: Q @ K.T).
  CHECK(last_line(attn::worked_score_cell(kQ, kK, 0, 1)) == "             = 3.2904");
}

TEST_CASE("scaling one score by √d", "[worked]") {
  CHECK(attn::worked_scaling(3.79, 4) == "scaled[0][0] = scores[0][0] / √d = 3.79 / √4 = 3.79 / 2 = 1.895\n");
  // √2 = 1.41421356..., -3.79 / 1.41421356 = -2.67993...
  CHECK(attn::worked_scaling(-3.79, 2, "scores[1][0]", "scaled[1][0]") ==
        "scaled[1][0] = scores[1][0] / √d = -3.79 / √2 = -3.79 / 1.4142 = -2.6799\n");
}

TEST_CASE("seed 004's softmax of [1.90, 1.61, 2.45] is [0.29, 0.21, 0.50]", "[worked]") {
  attn::WorkedOptions two_digits;
  two_digits.precision = 2;
  const std::string text = attn::worked_softmax_row({1.90, 1.61, 2.45}, "scaled[0]", "weights[0]", two_digits);
  CHECK(text.find("= [0.29, 0.21, 0.50]\n") != std::string::npos);

  // At 4 digits, every intermediate (NumPy: x - max = [-0.55, -0.84, 0], e = [0.5769, 0.4317, 1],
  // sum 2.00866..., weights [0.2872, 0.2149, 0.4978]).
  CHECK(attn::worked_softmax_row({1.90, 1.61, 2.45}) ==
        "weights[0] = softmax(scaled[0]), scaled[0] = [1.90, 1.61, 2.45]\n"
        "  max         = 2.45\n"
        "  x - max     = [1.90 - 2.45, 1.61 - 2.45, 2.45 - 2.45] = [-0.55, -0.84, 0.00]\n"
        "  e^(x - max) = [e^-0.55, e^-0.84, e^0.00] = [0.5769, 0.4317, 1.0000]\n"
        "  sum         = 0.5769 + 0.4317 + 1.0000 = 2.0087\n"
        "  weights[0]  = [0.5769 / 2.0087, 0.4317 / 2.0087, 1.0000 / 2.0087] = [0.2872, 0.2149, 0.4978]\n");

  // PyTorch's softmax to 8 digits: [0.28723115, 0.2149246, 0.49784425].
  attn::WorkedOptions eight;
  eight.precision = 8;
  CHECK(
      attn::worked_softmax_row({1.90, 1.61, 2.45}, "s", "w", eight).find("= [0.28723115, 0.21492460, 0.49784425]\n") !=
      std::string::npos);
}

TEST_CASE("a masked key gets weight 0 and a fully masked row is explained", "[worked]") {
  attn::WorkedOptions two_digits;
  two_digits.precision = 2;
  // e^(1.90 - 2.45) = 0.5769, e^0 = 1, sum 1.5769: weights 0.3659 and 0.6341.
  const std::string text = attn::worked_softmax_row({1.90, -INFINITY, 2.45}, "masked[0]", "weights[0]", two_digits);
  CHECK(text.find("  x - max     = [1.90 - 2.45, -inf - 2.45, 2.45 - 2.45] = [-0.55, -inf, 0.00]\n") !=
        std::string::npos);
  CHECK(text.find("  e^(x - max) = [e^-0.55, e^-inf, e^0.00] = [0.58, 0.00, 1.00]\n") != std::string::npos);
  CHECK(text.find("= [0.37, 0.00, 0.63]\n") != std::string::npos);

  CHECK(attn::worked_softmax_row({-INFINITY, -INFINITY}, "masked[2]", "weights[2]") ==
        "weights[2] = softmax(masked[2]), masked[2] = [-inf, -inf]\n"
        "  Every entry is -inf: every key is masked, so there is no weight to share out.\n"
        "  attn gives such a row all-zero weights and warns about it.\n");
}

TEST_CASE("seed 004's Output[\"I\"] as a weighted sum of value rows", "[worked]") {
  attn::ContextNames names;
  names.result = "context[0]";
  names.keys = {"\"I\"", "\"love\"", "\"AI\""};
  // NumPy: [0.29, 0.21, 0.50] @ V = [1.0877, 0.9814, 1.1553, 0.9003]. The seed prints
  // [1.09, 0.99, 1.16, 0.90]: its dimension 1 adds the rounded products 0.26 + 0.15 + 0.58;
  // the exact sum 0.2552 + 0.1512 + 0.5750 = 0.9814 rounds to 0.98.
  CHECK(attn::worked_context_row({0.29, 0.21, 0.50}, kV, names) ==
        "context[0] = 0.29×V[\"I\"] + 0.21×V[\"love\"] + 0.50×V[\"AI\"]\n"
        "           = 0.29×[0.98, 0.88, 1.02, 0.75]\n"
        "           + 0.21×[0.85, 0.72, 0.95, 0.68]\n"
        "           + 0.50×[1.25, 1.15, 1.32, 1.08]\n"
        "  dim 0: 0.29×0.98 + 0.21×0.85 + 0.50×1.25 = 0.2842 + 0.1785 + 0.6250 = 1.0877\n"
        "  dim 1: 0.29×0.88 + 0.21×0.72 + 0.50×1.15 = 0.2552 + 0.1512 + 0.5750 = 0.9814\n"
        "  dim 2: 0.29×1.02 + 0.21×0.95 + 0.50×1.32 = 0.2958 + 0.1995 + 0.6600 = 1.1553\n"
        "  dim 3: 0.29×0.75 + 0.21×0.68 + 0.50×1.08 = 0.2175 + 0.1428 + 0.5400 = 0.9003\n"
        "context[0] = [1.0877, 0.9814, 1.1553, 0.9003]\n");
  attn::WorkedOptions two_digits;
  two_digits.precision = 2;
  CHECK(last_line(attn::worked_context_row({0.29, 0.21, 0.50}, kV, names, two_digits)) ==
        "context[0] = [1.09, 0.98, 1.16, 0.90]");
}

TEST_CASE("one key (the decoder's first position): no step that repeats the one before", "[worked]") {
  // softmax([0.8865]) = [e^0 / e^0] = [1]; context = 1 x V[0]
  const std::string softmax = attn::worked_softmax_row({0.8865}, "masked[0][0]", "weights[0][0]");
  CHECK(softmax.find("  sum           = 1.0000\n") != std::string::npos);
  CHECK(softmax.find("= 1.0000 = 1.0000") == std::string::npos);
  attn::Tensor v({1, 2}, {"T", "d"});
  v.data = {1.2862, -0.7593};
  const std::string context = attn::worked_context_row({1.0}, v);
  CHECK(context.find("  dim 0: 1×1.2862 = 1.2862\n") != std::string::npos);
  CHECK(context.find("  dim 1: 1×(-0.7593) = -0.7593\n") != std::string::npos);
}

TEST_CASE("a LayerNorm row agrees with PyTorch", "[worked]") {
  // mean 3.99 / 4 = 0.9975; deviations [0.3425, -0.3575, -0.1875, 0.2025], squares
  // [0.11730625, 0.12780625, 0.03515625, 0.04100625] sum 0.321275, / 4 = 0.08031875 (PyTorch's
  // biased var); √(0.08031875 + 0.00001) = 0.28342...; PyTorch's layer_norm gives
  // [1.2084, -1.2614, -0.6616, 0.7145].
  CHECK(attn::worked_layer_norm_row({1.34, 0.64, 0.81, 1.20}, {1, 1, 1, 1}, {0, 0, 0, 0}, 1e-5) ==
        "LayerNorm(x), x = [1.34, 0.64, 0.81, 1.20]\n"
        "  mean         = (1.34 + 0.64 + 0.81 + 1.20) / 4 = 3.99 / 4 = 0.9975\n"
        "  x - mean     = [0.3425, -0.3575, -0.1875, 0.2025]\n"
        "  (x - mean)²  = [0.1173, 0.1278, 0.0352, 0.0410]\n"
        "  variance     = (0.1173 + 0.1278 + 0.0352 + 0.0410) / 4 = 0.3213 / 4 = 0.0803"
        "   (÷ N: biased)\n"
        "  √(var + eps) = √(0.0803 + 1e-05) = 0.2834\n"
        "  x̂            = (x - mean) / 0.2834 = [1.2084, -1.2614, -0.6616, 0.7145]\n"
        "  γ·x̂ + β      = x̂   (γ = 1, β = 0)\n");

  // With gamma [0.5, 1, 1.5, 2] and beta [0.1, 0, -0.1, 0.2], PyTorch to 8 digits:
  // [0.70421997, -1.26136432, -1.09233207, 1.62895818].
  attn::WorkedOptions eight;
  eight.precision = 8;
  const std::string text =
      attn::worked_layer_norm_row({1.34, 0.64, 0.81, 1.20}, {0.5, 1, 1.5, 2}, {0.1, 0, -0.1, 0.2}, 1e-5, "x", eight);
  CHECK(text.find("= [0.70421997, -1.26136432, -1.09233207, 1.62895818]\n") != std::string::npos);
  CHECK(text.find("[0.5×1.20843994 + 0.1, 1.0×(-1.26136432) + 0.0, 1.5×(-0.66155471) - 0.1, 2.0×0.71447909 + 0.2]") !=
        std::string::npos);
}

TEST_CASE("seed 004's PE(1) worked element by element", "[worked]") {
  attn::WorkedOptions three;
  three.precision = 3;
  CHECK(attn::worked_positional_encoding(1, 2, 4, three) ==
        "PE(1, 2): dimension 2 is even, so sin; i = 1 (2 and 3 share an angle)\n"
        "  divisor  = 10000^(2i/d_model) = 10000^(2×1/4) = 10000^0.5 = 100\n"
        "  angle    = pos / divisor = 1 / 100 = 0.01\n"
        "  PE(1, 2) = sin(0.01) = 0.01\n");
  CHECK(attn::worked_positional_encoding(1, 1, 4, three) ==
        "PE(1, 1): dimension 1 is odd, so cos; i = 0 (0 and 1 share an angle)\n"
        "  divisor  = 10000^(2i/d_model) = 10000^(2×0/4) = 10000^0 = 1\n"
        "  angle    = pos / divisor = 1 / 1 = 1\n"
        "  PE(1, 1) = cos(1) = 0.54\n");
  // Seed 004: "Result for position 1: [0.841, 0.540, 0.010, 1.000]".
  CHECK(last_line(attn::worked_positional_encoding_row(1, 4, three)) == "PE(1) = [0.841, 0.540, 0.010, 1.000]");
  // Seed 004's table row for position 2 at two digits: 0.91, -0.42, 0.02, 1.00.
  attn::WorkedOptions two;
  two.precision = 2;
  CHECK(last_line(attn::worked_positional_encoding_row(2, 4, two)) == "PE(2) = [0.91, -0.42, 0.02, 1.00]");
  // NumPy (the seed's own loop): PE(5) = [-0.9589, 0.2837, 0.05, 0.9988].
  CHECK(attn::sinusoidal_positional_encoding(5, 0, 4) == Approx(-0.9589242746631385).epsilon(1e-15));
  CHECK(attn::sinusoidal_positional_encoding(5, 3, 4) == Approx(std::cos(0.05)).epsilon(1e-15));
}

TEST_CASE("long sums are elided in the middle", "[worked]") {
  attn::DotProductNames names;
  names.result = "s";
  attn::WorkedOptions options;
  options.max_terms = 3;
  // 5 × (0.5 × -0.25) = -0.625; shown: terms 0 and 1, "…", term 4.
  CHECK(attn::worked_dot_product(names, std::vector<double>(5, 0.5), std::vector<double>(5, -0.25), std::nullopt,
                                 options) ==
        "s = 0.5×(-0.25) + 0.5×(-0.25) + … + 0.5×(-0.25)   (5 terms, 2 not shown)\n"
        "  = -0.125 - 0.125 + … - 0.125\n"
        "  = -0.625\n");
}

TEST_CASE("worked arithmetic rejects mismatched inputs", "[worked]") {
  CHECK_THROWS_AS(attn::worked_dot_product({"s", "", "", ""}, {1, 2}, {1}), attn::InternalError);
  CHECK_THROWS_AS(attn::worked_projection_cell(kX, kQ, attn::Tensor(), 0, 0, "Q", "X", "W"), attn::InternalError);
  CHECK_THROWS_AS(attn::worked_score_cell(kQ, kK, 3, 0), attn::InternalError);
  CHECK_THROWS_AS(attn::worked_context_row({0.5, 0.5}, kV), attn::InternalError);
  CHECK_THROWS_AS(attn::worked_layer_norm_row({1, 2}, {1}, {0, 0}, 1e-5), attn::InternalError);
  CHECK_THROWS_AS(attn::worked_positional_encoding(0, 4, 4), attn::InternalError);
  CHECK_THROWS_AS(attn::worked_softmax_row({}), attn::InternalError);
}

TEST_CASE("the worked numbers are the model's numbers", "[worked]") {
  // The presentation recomputes PE and LayerNorm for its text; it must agree with the step
  // functions the forward pass uses (same formula, same operation order: bit for bit).
  const attn::Tensor pe = attn::sinusoidal_positions(6, 4);
  for (std::size_t pos = 0; pos < 6; ++pos)
    for (std::size_t dim = 0; dim < 4; ++dim)
      CHECK(attn::sinusoidal_positional_encoding(pos, dim, 4) == pe.data[pos * 4 + dim]);

  attn::Tensor gamma({4}, {"N"}), beta({4}, {"N"});
  gamma.data = {0.5, 1, 1.5, 2};
  beta.data = {0.1, 0, -0.1, 0.2};
  const attn::Tensor normed = attn::layer_norm(kX, gamma, beta, 1e-5);
  attn::WorkedOptions eight;
  eight.precision = 8;
  const auto digits = attn::format_number_group(attn::to_vector(normed.data), 8);
  const std::string expected = "= [" + digits[0] + ", " + digits[1] + ", " + digits[2] + ", " + digits[3] + "]\n";
  CHECK(attn::worked_layer_norm_row(attn::to_vector(kX.data), attn::to_vector(gamma.data), attn::to_vector(beta.data),
                                    1e-5, "x", eight)
            .find(expected) != std::string::npos);
}

TEST_CASE("softmax's powers, sum and weights keep the same digits in every row", "[worked]") {
  // e^(x - max) of [0, ln 0.5] is [1, 0.5]: NumPy's maxprec printed them [1.0, 0.5] here and with four
  // digits in a row like [0.2260, 0.7971, 1]; every row now shows `precision` digits.
  const std::string text = attn::worked_softmax_row({0.0, std::log(0.5)}, "scaled[0]", "weights[0]");
  CHECK(text.find("= [1.0000, 0.5000]\n") != std::string::npos);
  CHECK(text.find("  sum         = 1.0000 + 0.5000 = 1.5000\n") != std::string::npos);
  CHECK(text.find("= [0.6667, 0.3333]\n") != std::string::npos);
}
