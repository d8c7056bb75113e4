#include "steps/projection.h"

#include <cmath>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "gradient_check.h"
#include "kernels/parallel.h"
#include "steps/positional_encoding.h"

using attn::Tensor;
using Catch::Matchers::WithinAbs;

namespace {
// x (rows,N) @ W (N,M) summed in order of k, one rounding per operation: the reference.
std::vector<double> plain_product(const Tensor& x, const Tensor& W) {
  const std::size_t N = W.shape[0], M = W.shape[1], rows = x.size() / N;
  std::vector<double> out(rows * M);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < M; ++c) {
      double sum = 0;
      for (std::size_t k = 0; k < N; ++k) sum += x.data[r * N + k] * W.data[k * M + c];
      out[r * M + c] = sum;
    }
  return out;
}

// Values with full 53-bit mantissas (sines and cosines), whose products round.
Tensor wavy(attn::Shape shape, attn::AxisNames axes, double step, bool cosine) {
  Tensor t(std::move(shape), std::move(axes));
  for (std::size_t i = 0; i < t.size(); ++i)
    t.data[i] = cosine ? std::cos(step * static_cast<double>(i)) : std::sin(step * static_cast<double>(i));
  return t;
}
}  // namespace

TEST_CASE("linear_projection is x @ W + b on the last axis", "[projection]") {
  // Seed 004: X[0] = [1.34, 0.64, 0.81, 1.20] (love + PE(1)), Wq as printed;
  // Q[0][0] = 1.34*0.1 + 0.64*0.5 + 0.81*0.2 + 1.20*0.4 = 1.096 and
  // Q[0][1] = 1.34*0.2 + 0.64*0.1 + 0.81*0.3 + 1.20*0.2 = 0.815.
  Tensor x({1, 1, 4}, {"B", "S", "N"}), W({4, 4}, {"N", "H*d"});
  x.data = {1.34, 0.64, 0.81, 1.20};
  W.data = {0.1, 0.2, 0.3, 0.4, 0.5, 0.1, 0.2, 0.3, 0.2, 0.3, 0.1, 0.5, 0.4, 0.2, 0.5, 0.1};
  const Tensor q = attn::linear_projection(x, W, Tensor(), "H*d");
  REQUIRE(q.shape == attn::Shape{1, 1, 4});
  CHECK(q.axes == attn::AxisNames{"B", "S", "H*d"});
  CHECK_THAT(q.data[0], WithinAbs(1.096, 1e-12));
  CHECK_THAT(q.data[1], WithinAbs(0.815, 1e-12));
  // Q[0][2] = 1.34*0.3 + 0.64*0.2 + 0.81*0.1 + 1.20*0.5 = 1.211 (the document prints 1.10: a slip)
  CHECK_THAT(q.data[2], WithinAbs(1.211, 1e-12));
  // with a bias every position gets b added
  Tensor b({4}, {"H*d"});
  b.data = {1, 2, 3, 4};
  const Tensor qb = attn::linear_projection(x, W, b, "H*d");
  CHECK(qb.data[3] == q.data[3] + 4);
}

TEST_CASE("matmul sums a row times a column in order, by hand", "[projection]") {
  // [[1, 2], [3, 4]] @ [[5, 6, 7], [8, 9, 10]] = [[21, 24, 27], [47, 54, 61]]
  const double a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8, 9, 10};
  double out[6];
  attn::matmul(a, b, out, 2, 2, 3);
  CHECK(std::vector<double>(out, out + 6) == std::vector<double>{21, 24, 27, 47, 54, 61});
}

TEST_CASE("small products round every multiply and add, as by hand (no fused multiply-add)", "[projection]") {
  // a = 1 + 2^-30, b = 1 - 2^-30: a*b = 1 - 2^-60 rounds to 1, so a*b + (-1)*1 is 0 when
  // each step is rounded; a fused multiply-add would keep -2^-60.
  const double a = 1.0 + std::ldexp(1.0, -30), b = 1.0 - std::ldexp(1.0, -30);
  Tensor x({1, 1, 2}, {"B", "S", "N"}), W({2, 1}, {"N", "H*d"});
  x.data = {a, -1.0};
  W.data = {b, 1.0};
  CHECK(attn::linear_projection(x, W, Tensor(), "H*d").data[0] == 0.0);
  // Just below the limit (31 x 32 x 33 = 32,736 multiply-adds): still the plain sum, bit for bit.
  const Tensor x2 = wavy({1, 31, 32}, {"B", "S", "N"}, 0.37, false);
  const Tensor W2 = wavy({32, 33}, {"N", "H*d"}, 0.11, true);
  REQUIRE(31 * 32 * 33 < attn::kExactMaxElements);
  CHECK(attn::linear_projection(x2, W2, Tensor(), "H*d").data == plain_product(x2, W2));
}

TEST_CASE("large projections take the fast path and agree with the plain one", "[projection]") {
  // (2 x 96 x 80) @ (80 x 72): 1.1M multiply-adds, above the plain path's limit and split
  // between two threads; then the bias
  const Tensor x = wavy({2, 96, 80}, {"B", "S", "N"}, 0.37, false);
  const Tensor W = wavy({80, 72}, {"N", "H*d"}, 0.11, true);
  Tensor b({72}, {"H*d"});
  for (std::size_t i = 0; i < 72; ++i) b.data[i] = static_cast<double>(i);
  const Tensor y = attn::linear_projection(x, W, b, "H*d");
  const std::vector<double> expected = plain_product(x, W);
  double worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i)
    worst = std::max(worst, std::abs(y.data[i] - (expected[i] + b.data[i % 72])));
  CHECK(worst < 1e-12);
}

TEST_CASE("seed 004 step 3: Q = X · Wq for \"I love AI\", and the rows its step 4 slips on", "[projection][seed004]") {
  // X = the embeddings of "I love AI" + PE, and the document's Wq.
  Tensor x({1, 3, 4}, {"B", "S", "N"});
  x.data = {0.10, 0.20, 0.30, 0.40, 0.50, 0.10, 0.80, 0.20, 0.90, 0.70, 0.20, 0.10};
  x = attn::add_positions(x, attn::sinusoidal_positions(3, 4));
  Tensor W({4, 4}, {"N", "H*d"});
  W.data = {0.1, 0.2, 0.3, 0.4, 0.5, 0.1, 0.2, 0.3, 0.2, 0.3, 0.1, 0.5, 0.4, 0.2, 0.5, 0.1};
  const Tensor q = attn::linear_projection(x, W, Tensor(), "H*d");
  // Row "love" (X = [1.34, 0.64, 0.81, 1.20]): its worked cells 1.096 and 0.815 are right, and so are
  // Q[2] = 1.211 and Q[3] = 1.253 (the document: [1.10, 0.82, 1.10, 0.89]). Its step 4 prints the rows of
  // "love" and "AI" as [1.18, 0.73, 0.98, 0.85] and [1.42, 1.12, 1.23, 1.35].
  const double love[] = {1.0963, 0.8153, 1.2115, 1.2537};
  const double ai[] = {0.8068, 0.6762, 1.1715, 1.0289};
  for (std::size_t j = 0; j < 4; ++j) {
    CHECK(std::round(q.at({0, 1, j}) * 1e4) / 1e4 == love[j]);
    CHECK(std::round(q.at({0, 2, j}) * 1e4) / 1e4 == ai[j]);
  }
}

TEST_CASE("linear_projection_backward: dx = dy Wᵀ, dW = xᵀ dy, db = Σ dy, as central differences say",
          "[projection][backward]") {
  using attn_test::numeric_gradient;
  using attn_test::relative_error;
  const attn::Tensor x = attn_test::wave_tensor({2, 3, 4}, {"B", "S", "N"}, 0.1);
  const attn::Tensor W = attn_test::wave_tensor({4, 5}, {"N", "M"}, 0.7);
  const attn::Tensor b = attn_test::wave_tensor({5}, {"M"}, 1.9);
  const attn::Tensor dy = attn_test::wave_tensor({2, 3, 5}, {"B", "S", "M"}, 2.3);
  const attn::ProjectionGradients g = attn::linear_projection_backward(x, W, true, dy);
  CHECK(g.dx.shape == x.shape);
  CHECK(g.dW.shape == W.shape);
  CHECK(g.db.shape == b.shape);
  const auto f_x = [&](const attn::Tensor& v) { return attn::linear_projection(v, W, b, "M"); };
  const auto f_W = [&](const attn::Tensor& v) { return attn::linear_projection(x, v, b, "M"); };
  const auto f_b = [&](const attn::Tensor& v) { return attn::linear_projection(x, W, v, "M"); };
  CHECK(relative_error(g.dx, numeric_gradient(f_x, x, dy)) < 1e-9);
  CHECK(relative_error(g.dW, numeric_gradient(f_W, W, dy)) < 1e-9);
  CHECK(relative_error(g.db, numeric_gradient(f_b, b, dy)) < 1e-9);
  // without a bias, no db
  CHECK(attn::linear_projection_backward(x, W, false, dy).db.data.empty());
}

TEST_CASE("matmul_transposed: the plain loops and the fast kernel compute aᵀb and abᵀ", "[projection][backward]") {
  // (M,K,P) = (40,30,50): 60,000 multiply-adds, above kExactMaxElements, so the kernel; and
  // (4,3,5) by the loops. Both against a sum written out here.
  for (const auto& [M, K, P] : {std::tuple<std::size_t, std::size_t, std::size_t>{40, 30, 50}, {4, 3, 5}}) {
    CAPTURE(M, K, P);
    const attn::Tensor a = attn_test::wave_tensor({K, M}, {}, 0.3), b = attn_test::wave_tensor({K, P}, {}, 1.1);
    std::vector<double> out(M * P), by_hand(M * P);
    attn::matmul_transposed(a.data.data(), b.data.data(), attn::Transposed::A, out.data(), M, K, P);
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < P; ++j)
        for (std::size_t k = 0; k < K; ++k) by_hand[i * P + j] += a.data[k * M + i] * b.data[k * P + j];
    for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(std::abs(out[i] - by_hand[i]) < 1e-12);
    // a @ bᵀ with a (M,K) and b stored (P,K)
    const attn::Tensor c = attn_test::wave_tensor({M, K}, {}, 0.5), d = attn_test::wave_tensor({P, K}, {}, 2.1);
    attn::matmul_transposed(c.data.data(), d.data.data(), attn::Transposed::B, out.data(), M, K, P);
    std::fill(by_hand.begin(), by_hand.end(), 0.0);
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < P; ++j)
        for (std::size_t k = 0; k < K; ++k) by_hand[i * P + j] += c.data[i * K + k] * d.data[j * K + k];
    for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(std::abs(out[i] - by_hand[i]) < 1e-12);
  }
}

TEST_CASE("add_bias: the bias row added at every position, as by hand and bit for bit as the fused projection",
          "[projection][bias]") {
  // docs/steps/bias.md: position 0 is (1, 2), b_q = (0.5, -1) -> (1.5, 1); position 1 (3, -1) -> (3.5, -2)
  Tensor q({1, 2, 2}, {"B", "S", "H*d"}), b({2}, {"H*d"});
  q.data = {1, 2, 3, -1};
  b.data = {0.5, -1};
  const Tensor biased = attn::add_bias(q, b);
  CHECK(biased.shape == q.shape);
  CHECK(biased.axes == q.axes);
  CHECK(biased.data == std::vector<double>{1.5, 1, 3.5, -2});
  // x · W then + b gives linear_projection(x, W, b)'s bits: one rounding per element either way
  const Tensor x = wavy({2, 3, 4}, {"B", "S", "N"}, 0.37, false), W = wavy({4, 5}, {"N", "M"}, 0.71, true);
  const Tensor bias = wavy({5}, {"M"}, 1.3, true);
  const Tensor split = attn::add_bias(attn::linear_projection(x, W, Tensor(), "M"), bias);
  CHECK(split.data == attn::linear_projection(x, W, bias, "M").data);
}

TEST_CASE("add_bias_backward: db = Σ dy over positions, as central differences say", "[projection][bias][backward]") {
  using attn_test::numeric_gradient;
  using attn_test::relative_error;
  const attn::Tensor x = attn_test::wave_tensor({2, 3, 5}, {"B", "S", "M"}, 0.1);
  const attn::Tensor b = attn_test::wave_tensor({5}, {"M"}, 1.9);
  const attn::Tensor dy = attn_test::wave_tensor({2, 3, 5}, {"B", "S", "M"}, 2.3);
  const attn::Tensor db = attn::add_bias_backward(dy, "M");
  CHECK(db.shape == b.shape);
  CHECK(db.axes == attn::AxisNames{"M"});
  const auto f_b = [&](const attn::Tensor& v) { return attn::add_bias(x, v); };
  CHECK(relative_error(db, numeric_gradient(f_b, b, dy)) < 1e-9);
  // by hand: dy = [[1, 2], [3, 4]] -> db = [1 + 3, 2 + 4]
  Tensor small({1, 2, 2}, {"B", "S", "H*d"});
  small.data = {1, 2, 3, 4};
  CHECK(attn::add_bias_backward(small, "H*d").data == attn::TensorData{4, 6});
  // and the same sums, in the same order, as linear_projection_backward's db
  const attn::Tensor W = attn_test::wave_tensor({4, 5}, {"N", "M"}, 0.7);
  const attn::Tensor xin = attn_test::wave_tensor({2, 3, 4}, {"B", "S", "N"}, 0.3);
  CHECK(db.data == attn::linear_projection_backward(xin, W, true, dy).db.data);
}
