#include "steps/attention.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <catch2/catch.hpp>

#include "gradient_check.h"
#include "steps/masks.h"

using attn::Tensor;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {
Tensor make(attn::Shape shape, attn::AxisNames axes, std::vector<double> data) {
  Tensor t(std::move(shape), std::move(axes));
  REQUIRE(data.size() == t.size());
  t.data.assign(data.begin(), data.end());
  return t;
}
}  // namespace

TEST_CASE("split_heads reshapes then moves heads before positions", "[attention]") {
  // (B=1,S=2,H*d=4): position 0 = [1,2,3,4], position 1 = [5,6,7,8]; 2 heads of 2.
  const Tensor x = make({1, 2, 4}, {"B", "S", "H*d"}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor r = attn::split_heads_reshape(x, 2);
  CHECK(r.shape == attn::Shape{1, 2, 2, 2});
  const Tensor h = attn::split_heads(x, 2);
  CHECK(h.shape == attn::Shape{1, 2, 2, 2});
  CHECK(h.axes == attn::AxisNames{"B", "H", "S", "d"});
  // head 0 holds columns 0-1 of every position, head 1 columns 2-3
  CHECK(h.data == std::vector<double>{1, 2, 5, 6, 3, 4, 7, 8});
  // merge_heads undoes it: the concatenation
  CHECK(attn::merge_heads(h).data == x.data);
  CHECK(attn::merge_heads(h).shape == attn::Shape{1, 2, 4});
}

TEST_CASE("scores, scaling, softmax and context for one head by hand", "[attention]") {
  // q = [[1,0],[0,1]], k = [[1,0],[1,1]]: scores = q @ k.T = [[1,1],[0,1]]
  const Tensor q = make({1, 1, 2, 2}, {"B", "H", "S", "d"}, {1, 0, 0, 1});
  const Tensor k = make({1, 1, 2, 2}, {"B", "H", "S", "d"}, {1, 0, 1, 1});
  const Tensor k_t = attn::transpose_keys(k);
  CHECK(k_t.data == std::vector<double>{1, 1, 0, 1});
  const Tensor scores = attn::attention_scores(q, k_t);
  CHECK(scores.data == std::vector<double>{1, 1, 0, 1});
  const Tensor scaled = attn::scale_scores(scores, 2);
  CHECK(scaled.data[0] == 1 / std::sqrt(2.0));
  const Tensor w = attn::softmax_rows(scaled);
  // row 0: equal scores -> [0.5, 0.5]; row 1: [e^0, e^(1/√2)] / sum
  CHECK(w.data[0] == 0.5);
  CHECK(w.data[1] == 0.5);
  const double e = std::exp(1 / std::sqrt(2.0));
  CHECK_THAT(w.data[2], WithinAbs(1 / (1 + e), 1e-15));
  CHECK_THAT(w.data[3], WithinAbs(e / (1 + e), 1e-15));
  // v = [[2, 0], [0, 4]]: context row 0 = 0.5*[2,0] + 0.5*[0,4] = [1, 2]
  const Tensor v = make({1, 1, 2, 2}, {"B", "H", "S", "d"}, {2, 0, 0, 4});
  const Tensor c = attn::attention_context(w, v);
  CHECK(c.data[0] == 1.0);
  CHECK(c.data[1] == 2.0);
}

TEST_CASE("softmax subtracts the row maximum so huge scores do not overflow", "[attention]") {
  // exp(1000) overflows a double; softmax([1000, 1000 - ln 3]) = [0.75, 0.25] all the same.
  const Tensor s = make({1, 2}, {"S", "S"}, {1000.0, 1000.0 - std::log(3.0)});
  const Tensor w = attn::softmax_rows(s);
  CHECK_THAT(w.data[0], WithinAbs(0.75, 1e-12));
  CHECK_THAT(w.data[1], WithinAbs(0.25, 1e-12));
}

TEST_CASE("softmax underflows as exp does: subnormal weights, then exactly zero", "[attention]") {
  // exp(-720) = 2.3e-313 is subnormal and 1 + exp(-720) == 1, so the weight is exp(-720)
  // itself, to the precision a subnormal has (35 bits here); exp(-800) is 0. A vectorized
  // exp clamped at -709.78 would give 2.2e-308 for both.
  const Tensor s = make({1, 3}, {"S", "S"}, {0.0, -720.0, -800.0});
  const Tensor w = attn::softmax_rows(s);
  CHECK(w.data[0] == 1.0);
  CHECK_THAT(w.data[1], WithinRel(std::exp(-720.0), 1e-9));
  CHECK(w.data[1] < 1e-312);
  CHECK(w.data[2] == 0.0);
  // a longer row, summed in NumPy's pairwise order, agrees with the plain formula
  std::vector<double> row(37);
  for (std::size_t j = 0; j < row.size(); ++j) row[j] = -0.25 * static_cast<double>(j);
  const Tensor long_row = attn::softmax_rows(make({1, row.size()}, {"S", "S"}, row));
  double sum = 0;
  for (double r : row) sum += std::exp(r);
  for (std::size_t j = 0; j < row.size(); ++j) CHECK_THAT(long_row.data[j], WithinRel(std::exp(row[j]) / sum, 1e-14));
}

TEST_CASE("scale_scores divides every score by sqrt(d), on one thread or two", "[attention]") {
  // 2 x 2 x 600 x 600 = 1.44M scores: shared between the threads; each is score / 8 all the same
  Tensor s({2, 2, 600, 600}, {"B", "H", "S", "S"});
  for (std::size_t i = 0; i < s.size(); ++i) s.data[i] = std::sin(0.7 * static_cast<double>(i)) * 100.0;
  // √64 = 8 is a power of two, so scale_scores multiplies by 1/8: the same bits as / 8 for
  // every double, subnormal results (rounded once either way) and extremes included.
  const double extremes[] = {1e-310, -3e-320, 5e-324, 1.7976931348623157e308, -2.2250738585072014e-308, 0.1};
  for (std::size_t i = 0; i < 6; ++i) s.data[i] = extremes[i];
  const Tensor scaled = attn::scale_scores(s, 64);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < s.size(); ++i) wrong += scaled.data[i] == s.data[i] / 8.0 ? 0 : 1;
  CHECK(wrong == 0);
  // d = 2: divided by sqrt(2), not multiplied by 1/sqrt(2) (NumPy's scores / np.sqrt(d))
  const Tensor small = make({1, 1, 1, 1}, {"B", "H", "S", "S"}, {3.0});
  CHECK(attn::scale_scores(small, 2).data[0] == 3.0 / std::sqrt(2.0));
}

TEST_CASE("causal mask and a fully masked row", "[attention]") {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor mask = attn::causal_mask(3, 3);
  // masked scores: the first row keeps only its first key -> weight 1
  Tensor scores({1, 1, 3, 3}, {"B", "H", "S", "S"});
  const Tensor masked = attn::apply_mask(scores, mask);
  const Tensor w = attn::softmax_rows(masked);
  CHECK(w.data[0] == 1.0);
  CHECK(w.data[1] == 0.0);
  CHECK_THAT(w.data[3], WithinAbs(0.5, 1e-15));
  CHECK_THAT(w.data[8], WithinAbs(1.0 / 3, 1e-15));
  // every key masked: zero weights by policy, and counted
  const Tensor all_masked = make({1, 2}, {"S", "S"}, {-inf, -inf});
  std::size_t fully = 0;
  const Tensor z = attn::softmax_rows(all_masked, &fully);
  CHECK(fully == 1);
  CHECK(z.data == std::vector<double>{0.0, 0.0});
}

TEST_CASE("apply_mask broadcasts an (S,T) mask over batch and heads, a (B,S,T) one over heads", "[attention]") {
  const double inf = std::numeric_limits<double>::infinity();
  // scores (B=2,H=2,S=1,T=2), every score 1
  const Tensor scores = make({2, 2, 1, 2}, {"B", "H", "S", "S"}, {1, 1, 1, 1, 1, 1, 1, 1});
  const Tensor shared = make({1, 2}, {"S", "S"}, {0, -inf});
  CHECK(attn::apply_mask(scores, shared).data == std::vector<double>{1, -inf, 1, -inf, 1, -inf, 1, -inf});
  const Tensor per_batch = make({2, 1, 2}, {"B", "S", "S"}, {0, -inf, -inf, 0});
  CHECK(attn::apply_mask(scores, per_batch).data == std::vector<double>{1, -inf, 1, -inf, -inf, 1, -inf, 1});
}

TEST_CASE("seed 004 step 4: scores, scaling, softmax and output from its Q, K, V", "[attention][seed004]") {
  // The document's Q, K, V for "I love AI" (3 tokens, d_k = 4, one head).
  const Tensor q = make({1, 1, 3, 4}, {"B", "H", "S", "d"},
                        {1.10, 0.82, 1.10, 0.89, 1.18, 0.73, 0.98, 0.85, 1.42, 1.12, 1.23, 1.35});
  const Tensor k = make({1, 1, 3, 4}, {"B", "H", "S", "d"},
                        {1.05, 0.95, 0.78, 1.12, 1.02, 0.68, 0.72, 0.92, 1.38, 1.28, 1.05, 1.42});
  const Tensor v = make({1, 1, 3, 4}, {"B", "H", "S", "d"},
                        {0.98, 0.88, 1.02, 0.75, 0.85, 0.72, 0.95, 0.68, 1.25, 1.15, 1.32, 1.08});
  const Tensor scores = attn::attention_scores(q, attn::transpose_keys(k));
  // QK^T[0][0] = 1.10*1.05 + 0.82*0.95 + 1.10*0.78 + 0.89*1.12 = 1.155 + 0.779 + 0.858 + 0.9968 = 3.7888 ("3.79" in the
  // document).
  CHECK_THAT(scores.data[0], WithinAbs(3.7888, 1e-12));
  // The rest of the document's table slips: it prints [3.79, 3.21, 4.89; 3.63, 3.12, 4.63; 4.88, 4.14, 6.33]; the
  // products of its own Q and K are these (4 decimals):
  const double correct[] = {3.7888, 3.2904, 4.9864, 3.6489, 3.1876, 4.7988, 5.0264, 4.3376, 6.6017};
  for (std::size_t i = 0; i < 9; ++i) CHECK(std::round(scores.data[i] * 1e4) / 1e4 == correct[i]);
  // Scaled by √4 = 2: row "I" is [1.8944, 1.6452, 2.4932] (the document: [1.90, 1.61, 2.45]).
  const Tensor scaled = attn::scale_scores(scores, 4);
  CHECK_THAT(scaled.data[1], WithinAbs(1.6452, 1e-12));
  // The document's softmax of its own row [1.90, 1.61, 2.45] is right: e^x = [6.69, 5.00, 11.59], sum 23.28,
  // weights [0.29, 0.21, 0.50].
  const Tensor doc_row = make({1, 3}, {"S", "S"}, {1.90, 1.61, 2.45});
  const Tensor doc_w = attn::softmax_rows(doc_row);
  CHECK(std::round(doc_w.data[0] * 100) / 100 == 0.29);
  CHECK(std::round(doc_w.data[1] * 100) / 100 == 0.21);
  CHECK(std::round(doc_w.data[2] * 100) / 100 == 0.50);
  // From the correct scores the weights of "I" are [0.2778, 0.2165, 0.5056], and Output["I"] = weights @ V is
  // [1.0884, 0.9819, 1.1565, 0.9017] (the document prints [1.09, 0.99, 1.16, 0.90]: 0.99 should be 0.98).
  const Tensor w = attn::softmax_rows(scaled);
  CHECK(std::round(w.data[0] * 1e4) / 1e4 == 0.2778);
  CHECK(std::round(w.data[2] * 1e4) / 1e4 == 0.5056);
  const Tensor out = attn::attention_context(w, v);
  const double out0[] = {1.0884, 0.9819, 1.1565, 0.9017};
  for (std::size_t j = 0; j < 4; ++j) CHECK(std::round(out.data[j] * 1e4) / 1e4 == out0[j]);
}

TEST_CASE("seed 004's other slips: the scaling example, the weights of \"love\" and \"AI\", Output[\"love\"]",
          "[attention][seed004]") {
  const auto round_to = [](double v, double scale) { return std::round(v * scale) / scale; };
  const auto softmax_of = [](const std::vector<double>& row) {
    return attn::softmax_rows(make({1, row.size()}, {"S", "S"}, row)).data;
  };
  // "WITHOUT scaling: softmax([10.0, 11.0, 10.5]) = [0.01, 0.98, 0.01]": it is [0.1863, 0.5065, 0.3072].
  const auto unscaled = softmax_of({10.0, 11.0, 10.5});
  const double unscaled_right[] = {0.1863, 0.5065, 0.3072};
  for (std::size_t j = 0; j < 3; ++j) CHECK(round_to(unscaled[j], 1e4) == unscaled_right[j]);
  // "WITH scaling: softmax([1.25, 1.38, 1.31]) = [0.31, 0.38, 0.31]": it is [0.3124, 0.3558, 0.3318].
  const auto scaled = softmax_of({1.25, 1.38, 1.31});
  const double scaled_right[] = {0.3124, 0.3558, 0.3318};
  for (std::size_t j = 0; j < 3; ++j) CHECK(round_to(scaled[j], 1e4) == scaled_right[j]);
  // The weights of "love" and "AI" from its own scaled rows (it prints [0.30, 0.23, 0.47] and [0.28, 0.19, 0.53]).
  const auto love = softmax_of({1.82, 1.56, 2.32});
  const double love_right[] = {0.29, 0.23, 0.48};
  for (std::size_t j = 0; j < 3; ++j) CHECK(round_to(love[j], 100) == love_right[j]);
  const auto ai = softmax_of({2.44, 2.07, 3.17});
  const double ai_right[] = {0.27, 0.18, 0.55};
  for (std::size_t j = 0; j < 3; ++j) CHECK(round_to(ai[j], 100) == ai_right[j]);
  // Output["love"] = its weights row [0.30, 0.23, 0.47] times its V: [1.0770, 0.9701, 1.1449, 0.8890] (it prints
  // [1.07, 0.97, 1.14, 0.88]).
  const Tensor w = make({1, 1, 1, 3}, {"B", "H", "S", "S"}, {0.30, 0.23, 0.47});
  const Tensor v = make({1, 1, 3, 4}, {"B", "H", "S", "d"},
                        {0.98, 0.88, 1.02, 0.75, 0.85, 0.72, 0.95, 0.68, 1.25, 1.15, 1.32, 1.08});
  const Tensor out = attn::attention_context(w, v);
  const double out_love[] = {1.0770, 0.9701, 1.1449, 0.8890};
  for (std::size_t j = 0; j < 4; ++j) CHECK(round_to(out.data[j], 1e4) == out_love[j]);
}

TEST_CASE("softmax of rows with huge but finite scores stays finite (the row max is subtracted)",
          "[attention][numeric]") {
  // exp(1e15) alone overflows; exp(x - max) does not. Hand-worked:
  //   [1e15, 1e15 - 1] -> [1, e^-1] / (1 + e^-1) = [0.7310585786300049, 0.2689414213699951]
  //   [1e308, -1e308, 1.7e308]: x - max = [-0.7e308, -2.7e308 (-> -inf), 0] -> [0, 0, 1]
  //   [1e300, 1e300] -> [0.5, 0.5]
  const Tensor rows = make({3, 3}, {"S", "S"}, {1e15, 1e15 - 1, -1e300, 1e308, -1e308, 1.7e308, 1e300, 1e300, -1e300});
  const Tensor w = attn::softmax_rows(rows);
  for (double v : w.data) CHECK(std::isfinite(v));
  CHECK_THAT(w.data[0], WithinAbs(0.7310585786300049, 1e-15));
  CHECK_THAT(w.data[1], WithinAbs(0.2689414213699951, 1e-15));
  CHECK(w.data[2] == 0.0);
  CHECK(w.data[3] == 0.0);
  CHECK(w.data[4] == 0.0);
  CHECK(w.data[5] == 1.0);
  CHECK(w.data[6] == 0.5);
  CHECK(w.data[7] == 0.5);
  CHECK(w.data[8] == 0.0);
}

TEST_CASE("small score products round every multiply and add, as by hand (no fused multiply-add)", "[attention]") {
  // a = 1 + 2^-30, b = 1 - 2^-30: a*b = 1 - 2^-60 rounds to 1, so a*b + (-1)*1 is 0 when
  // each step is rounded; a fused multiply-add would keep -2^-60.
  const double a = 1.0 + std::ldexp(1.0, -30), b = 1.0 - std::ldexp(1.0, -30);
  const Tensor q = make({1, 1, 1, 2}, {"B", "H", "S", "d"}, {a, -1.0});
  const Tensor k_t = make({1, 1, 2, 1}, {"B", "H", "d", "S"}, {b, 1.0});
  CHECK(attn::attention_scores(q, k_t).data[0] == 0.0);
}

TEST_CASE("large score products and softmaxes take the fast path and agree with the plain one", "[attention]") {
  // scores for (B=2,H=3) heads of (S=70,d=40) @ (d=40,T=90): 252,000 multiply-adds a head,
  // above the plain path's limit; six heads, above the threads' limit
  Tensor q({2, 3, 70, 40}, {"B", "H", "S", "d"}), k_t({2, 3, 40, 90}, {"B", "H", "d", "S"});
  for (std::size_t i = 0; i < q.size(); ++i) q.data[i] = std::sin(0.37 * static_cast<double>(i));
  for (std::size_t i = 0; i < k_t.size(); ++i) k_t.data[i] = std::cos(0.11 * static_cast<double>(i));
  const Tensor scores = attn::attention_scores(q, k_t);
  REQUIRE(scores.shape == attn::Shape{2, 3, 70, 90});
  double worst = 0;
  for (std::size_t h = 0; h < 6; ++h)
    for (std::size_t i = 0; i < 70; ++i)
      for (std::size_t j = 0; j < 90; ++j) {
        double sum = 0;
        for (std::size_t k = 0; k < 40; ++k) sum += q.data[(h * 70 + i) * 40 + k] * k_t.data[(h * 40 + k) * 90 + j];
        worst = std::max(worst, std::abs(scores.data[(h * 70 + i) * 90 + j] - sum));
      }
  CHECK(worst < 1e-12);

  // softmax over (1, 2, 150, 150) = 45,000 entries: the vectorized exp
  Tensor s({1, 2, 150, 150}, {"B", "H", "S", "S"});
  for (std::size_t i = 0; i < s.size(); ++i) s.data[i] = 40.0 * std::sin(0.013 * static_cast<double>(i * i % 1009));
  s.data[5] = -std::numeric_limits<double>::infinity();
  std::fill(s.data.begin() + 150, s.data.begin() + 300, -std::numeric_limits<double>::infinity());  // row 1 masked
  std::size_t fully_masked = 0;
  const Tensor w = attn::softmax_rows(s, &fully_masked);
  double worst_rel = 0;
  for (std::size_t r = 0; r < 300; ++r) {
    if (r == 1) continue;
    double max = -1e300, sum = 0;
    for (std::size_t j = 0; j < 150; ++j) max = std::max(max, s.data[r * 150 + j]);
    for (std::size_t j = 0; j < 150; ++j) sum += std::exp(s.data[r * 150 + j] - max);
    for (std::size_t j = 0; j < 150; ++j) {
      const double expected = std::exp(s.data[r * 150 + j] - max) / sum;
      if (expected > 1e-300) worst_rel = std::max(worst_rel, std::abs(w.data[r * 150 + j] - expected) / expected);
    }
  }
  CHECK(worst_rel < 1e-13);
  CHECK(w.data[5] == 0.0);
  CHECK(fully_masked == 1);
  for (std::size_t j = 150; j < 300; ++j) CHECK(w.data[j] == 0.0);
}

TEST_CASE("softmax_rows_backward by hand: w ⊙ (dw - Σ dw ⊙ w)", "[attention][backward]") {
  // w = [0.2, 0.3, 0.5], dw = [1, 0, 0]: Σ dw ⊙ w = 0.2, so dS = [0.2·0.8, 0.3·(-0.2), 0.5·(-0.2)]
  const Tensor w = make({1, 3}, {"S", "T"}, {0.2, 0.3, 0.5});
  const Tensor dw = make({1, 3}, {"S", "T"}, {1, 0, 0});
  const Tensor ds = attn::softmax_rows_backward(w, dw);
  CHECK_THAT(ds.data[0], WithinAbs(0.16, 1e-16));
  CHECK_THAT(ds.data[1], WithinAbs(-0.06, 1e-16));
  CHECK_THAT(ds.data[2], WithinAbs(-0.1, 1e-16));
  // a fully masked row has zero weights and gets zero gradients, not NaN
  const Tensor zeros = make({1, 3}, {"S", "T"}, {0, 0, 0});
  CHECK(attn::softmax_rows_backward(zeros, dw).data == std::vector<double>{0, 0, 0});
}

TEST_CASE("the attention steps' backward functions agree with central differences", "[attention][backward]") {
  using attn_test::numeric_gradient;
  using attn_test::relative_error;
  using attn_test::wave_tensor;
  const Tensor q = wave_tensor({2, 2, 3, 4}, {"B", "H", "S", "d"}, 0.2);
  const Tensor k_t = wave_tensor({2, 2, 4, 5}, {"B", "H", "d", "T"}, 1.2);
  const Tensor ds = wave_tensor({2, 2, 3, 5}, {"B", "H", "S", "T"}, 2.2);
  const attn::ProductGradients scores = attn::attention_scores_backward(q, k_t, ds);
  CHECK(relative_error(scores.da, numeric_gradient([&](const Tensor& v) { return attn::attention_scores(v, k_t); }, q,
                                                   ds)) < 1e-9);
  CHECK(relative_error(scores.db, numeric_gradient([&](const Tensor& v) { return attn::attention_scores(q, v); }, k_t,
                                                   ds)) < 1e-9);
  // softmax over rows of scaled scores, then the context with V (B,H,T,d)
  const Tensor v = wave_tensor({2, 2, 5, 4}, {"B", "H", "T", "d"}, 3.2);
  const Tensor dc = wave_tensor({2, 2, 3, 4}, {"B", "H", "S", "d"}, 4.2);
  const Tensor weights = attn::softmax_rows(ds);
  const attn::ProductGradients context = attn::attention_context_backward(weights, v, dc);
  CHECK(relative_error(context.da, numeric_gradient([&](const Tensor& w) { return attn::attention_context(w, v); },
                                                    weights, dc)) < 1e-9);
  CHECK(relative_error(context.db,
                       numeric_gradient([&](const Tensor& x) { return attn::attention_context(weights, x); }, v, dc)) <
        1e-9);
  const Tensor dw = wave_tensor(ds.shape, ds.axes, 5.2);
  CHECK(relative_error(attn::softmax_rows_backward(weights, dw),
                       numeric_gradient([](const Tensor& x) { return attn::softmax_rows(x); }, ds, dw)) < 1e-9);
  CHECK(relative_error(attn::scale_scores_backward(dw, 4),
                       numeric_gradient([](const Tensor& x) { return attn::scale_scores(x, 4); }, ds, dw)) < 1e-9);
}

TEST_CASE("the head moves' backward functions put each gradient back where its number came from",
          "[attention][backward]") {
  const Tensor x = attn_test::wave_tensor({2, 3, 6}, {"B", "S", "H*d"}, 0.4);
  // split_heads then its backward is the identity; merge_heads likewise
  const Tensor heads = attn::split_heads(x, 3);
  CHECK(attn::split_heads_backward(heads).data == x.data);
  CHECK(attn::split_heads_backward(heads).shape == x.shape);
  CHECK(attn::merge_heads_backward(attn::merge_heads(heads), 3).data == heads.data);
  const Tensor k = attn_test::wave_tensor({2, 3, 5, 2}, {"B", "H", "T", "d"}, 0.9);
  CHECK(attn::transpose_keys_backward(attn::transpose_keys(k)).data == k.data);
}

TEST_CASE("a masked score's gradient is exactly 0, and the rest pass through", "[attention][backward]") {
  const Tensor mask = attn::causal_mask(2, 2);  // row 0 hides key 1
  const Tensor d = make({1, 1, 2, 2}, {"B", "H", "S", "T"}, {0.5, 0.25, -1.5, 2});
  const Tensor out = attn::apply_mask_backward(d, mask);
  CHECK(out.data == std::vector<double>{0.5, 0.0, -1.5, 2});
  // through the softmax too: masked scores get weight 0, so their gradient is 0 already
  const Tensor masked = attn::apply_mask(make({1, 1, 2, 2}, {"B", "H", "S", "T"}, {1, 2, 3, 4}), mask);
  const Tensor ds = attn::softmax_rows_backward(attn::softmax_rows(masked), d);
  CHECK(ds.data[1] == 0.0);
}

TEST_CASE("repeat_kv_heads: query head h reads key/value head h // (H/G), its backward sums the copies",
          "[attention][gqa]") {
  // G = 2 heads of one position and d = 1, values 10 and 20, repeated to H = 4: [10, 10, 20, 20].
  attn::Tensor kv({1, 2, 1, 1}, {"B", "G", "S", "d"});
  kv.data = {10, 20};
  const attn::Tensor r = attn::repeat_kv_heads(kv, 4);
  CHECK(r.shape == attn::Shape{1, 4, 1, 1});
  CHECK(r.data == std::vector<double>{10, 10, 20, 20});
  CHECK(r.axes[1] == "H");
  // Multi-query: one head for all.
  CHECK(attn::repeat_kv_heads(kv, 2).data == std::vector<double>{10, 20});
  attn::Tensor d({1, 4, 1, 1}, {"B", "H", "S", "d"});
  d.data = {1, 2, 3, 4};
  const attn::Tensor g = attn::repeat_kv_heads_backward(d, 2);
  CHECK(g.shape == attn::Shape{1, 2, 1, 1});
  CHECK(g.data == std::vector<double>{3, 7});  // 1 + 2, 3 + 4
  CHECK(attn::repeat_kv_heads_backward(d, 1).data == std::vector<double>{10});
}

TEST_CASE("GPT-Neo's unscaled scores: ScoreScale::None gives the scores, its backward the gradient", "[attention]") {
  Tensor s({1, 1, 2, 2}, {"B", "H", "S", "S"});
  s.data = {3, -1, 0.5, 7};
  CHECK(attn::scale_scores(s, 4, attn::ScoreScale::None).data == s.data);
  CHECK(attn::scale_scores_backward(s, 4, attn::ScoreScale::None).data == s.data);
  // the paper's: / √4 = / 2
  CHECK(attn::scale_scores(s, 4, attn::ScoreScale::InverseSqrtHead).data == std::vector<double>{1.5, -0.5, 0.25, 3.5});
  CHECK(attn::scale_scores_backward(s, 4, attn::ScoreScale::InverseSqrtHead).data ==
        std::vector<double>{1.5, -0.5, 0.25, 3.5});
}

TEST_CASE("scores_to_weights: the scale, mask and softmax steps' own bits in one pass", "[attention]") {
  // (B=2, H=3, S=70, T=90) = 37,800 scores, above kExactMaxElements: the one-pass kernel.
  Tensor scores({2, 3, 70, 90}, {"B", "H", "S", "T"});
  for (std::size_t i = 0; i < scores.size(); ++i)
    scores.data[i] = 30.0 * std::sin(0.011 * static_cast<double>(i * i % 2003)) + 1e-3 * static_cast<double>(i % 7);
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor causal = attn::causal_mask(70, 90);
  Tensor padded({2, 90}, {"B", "T"});  // item 1 pads every key: its 210 rows are fully masked
  for (std::size_t j = 0; j < 90; ++j) padded.data[90 + j] = 1;
  padded.data[3] = 1;
  const Tensor per_batch = attn::attention_mask(70, 90, true, &padded, 0);
  const auto same_bits = [](const Tensor& a, const Tensor& b) {
    return a.shape == b.shape && std::memcmp(a.data.data(), b.data.data(), a.size() * sizeof(double)) == 0;
  };
  struct Scale {
    std::size_t d_head;
    attn::ScoreScale scale;
    bool times_inverse_root;
  };
  // d 64: times 1/8 exactly; d 48: / √48; d 48 · 48^-0.5 (transformers'); unscaled (GPT-Neo)
  for (const Scale& s :
       {Scale{64, attn::ScoreScale::InverseSqrtHead, false}, Scale{48, attn::ScoreScale::InverseSqrtHead, false},
        Scale{48, attn::ScoreScale::InverseSqrtHead, true}, Scale{64, attn::ScoreScale::None, false}})
    for (const Tensor* mask : {static_cast<const Tensor*>(nullptr), &causal, &per_batch}) {
      const attn::ScoresToWeights w = attn::scores_to_weights(scores, mask, s.d_head, s.scale, s.times_inverse_root);
      const Tensor scaled = attn::scale_scores(scores, s.d_head, s.scale, s.times_inverse_root);
      CHECK(same_bits(w.scaled, scaled));
      const Tensor masked = mask ? attn::apply_mask(scaled, *mask) : scaled;
      if (mask) CHECK(same_bits(w.masked, masked));
      std::size_t fully_masked = 0;
      CHECK(same_bits(w.weights, attn::softmax_rows(masked, &fully_masked)));
      CHECK(w.fully_masked_rows == fully_masked);
      CHECK(w.fully_masked_rows == (mask == &per_batch ? 210 : 0));
      CHECK(w.scores_checked);
      CHECK(w.masked_checked);
      // not kept: the same weights, the scaled and masked scores as shapes alone
      const attn::ScoresToWeights lean =
          attn::scores_to_weights(scores, mask, s.d_head, s.scale, s.times_inverse_root, false);
      CHECK(same_bits(lean.weights, w.weights));
      CHECK(lean.fully_masked_rows == w.fully_masked_rows);
      CHECK((lean.scores_checked && lean.masked_checked));
      CHECK(lean.scaled.shape == scores.shape);
      CHECK(lean.scaled.data.empty());
      CHECK(lean.masked.data.empty());
    }
  // A NaN score, or a mask that adds +inf, is left for the trace's check to name.
  Tensor nan_scores = scores;
  nan_scores.data[37000] = std::nan("");
  const attn::ScoresToWeights with_nan =
      attn::scores_to_weights(nan_scores, &causal, 64, attn::ScoreScale::InverseSqrtHead, false);
  CHECK_FALSE(with_nan.scores_checked);
  CHECK_FALSE(with_nan.masked_checked);
  Tensor plus_inf = causal;
  plus_inf.data[5 * 90 + 2] = inf;
  const attn::ScoresToWeights with_inf =
      attn::scores_to_weights(scores, &plus_inf, 64, attn::ScoreScale::InverseSqrtHead, false);
  CHECK(with_inf.scores_checked);
  CHECK_FALSE(with_inf.masked_checked);
  const attn::ScoresToWeights lean_with_inf =
      attn::scores_to_weights(scores, &plus_inf, 64, attn::ScoreScale::InverseSqrtHead, false, false);
  CHECK(lean_with_inf.scores_checked);
  CHECK_FALSE(lean_with_inf.masked_checked);
  // Below kExactMaxElements the steps run one after the other and the pass checks nothing.
  const Tensor few({1, 1, 4, 4}, {"B", "H", "S", "T"});
  const attn::ScoresToWeights small =
      attn::scores_to_weights(few, nullptr, 64, attn::ScoreScale::InverseSqrtHead, false);
  CHECK(same_bits(small.weights, attn::softmax_rows(attn::scale_scores(few, 64))));
  CHECK_FALSE(small.scores_checked);
}
