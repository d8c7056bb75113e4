#include "present/tensor_stats.h"

#include <cmath>

#include <catch2/catch.hpp>

// Data and expected statistics from tests/reference/make_tensor_stats_cases.py (NumPy 1.24:
// finite.min(), .max(), .mean(), .std() with the default ddof=0, and '%.4g').

namespace {

attn::Tensor masked_scores() {
  attn::Tensor t({2, 2, 6, 6}, {"B", "H", "S", "S"});
  t.data = {0.51,      -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -6.48,     5.99,      -INFINITY,
            -INFINITY, -INFINITY, -INFINITY, 4.25,      3.32,      -11.57,    -INFINITY, -INFINITY, -INFINITY,
            7.23,      0.46,      -9.83,     0.54,      -INFINITY, -INFINITY, 22.23,     3.94,      16.92,
            -11.13,    16.36,     -INFINITY, -6.51,     5.42,      0.48,      -23.58,    -11.06,    8.38,
            20.88,     9.15,      -2.76,     7.97,      -11.44,    5.1,       -13.47,    -0.09,     -1.31,
            8.02,      -3.03,     12.02,     -1.97,     8.37,      7.87,      -18.41,    0.38,      0.36,
            -7.79,     1.79,      -14.56,    5.56,      5.1,       3.0,       24.77,     3.52,      0.67,
            -7.32,     2.97,      -9.62,     12.72,     -6.48,     1.58,      19.9,      11.64,     2.43,
            13.8,      -0.55,     7.95,      0.19,      -9.05,     4.3,       9.35,      -3.46,     -10.97,
            -5.28,     -23.8,     -6.08,     -10.75,    20.22,     -5.65,     -15.43,    8.71,      -1.75,
            0.49,      1.89,      2.09,      -3.74,     9.55,      5.23,      -4.96,     -1.71,     -9.44,
            2.81,      7.38,      6.51,      6.15,      -1.27,     15.79,     -2.07,     0.3,       -3.36,
            0.81,      -2.41,     20.32,     4.26,      -16.83,    -4.34,     -14.16,    8.8,       13.75,
            -4.51,     6.14,      -2.1,      4.08,      17.32,     -3.49,     -12.33,    7.18,      5.17,
            6.74,      10.26,     -6.81,     -19.66,    10.41,     -4.09,     -12.07,    -11.68,    11.28,
            1.81,      3.03,      8.5,       -6.77,     -11.25,    -8.53,     -11.05,    -2.91,     -8.91};
  return t;
}

}  // namespace

TEST_CASE("statistics of masked scores agree with NumPy over the finite values", "[stats]") {
  const attn::TensorStats s = attn::compute_tensor_stats(masked_scores());
  CHECK(s.count == 144);
  CHECK(s.finite_count == 129);
  CHECK(s.negative_infinities == 15);
  CHECK(s.positive_infinities == 0);
  CHECK(s.nans == 0);
  CHECK(s.min == -23.8);
  CHECK(s.max == 24.77);
  CHECK(s.mean == Approx(0.563875968992248).epsilon(1e-14));
  CHECK(s.std == Approx(9.676792048851176).epsilon(1e-14));
}

TEST_CASE("the summary line of masked scores", "[stats]") {
  CHECK(attn::format_tensor_stats(masked_scores()) ==
        "tensor (B=2,H=2,S=6,S=6) n=144 x∈[-23.8, 24.77] μ=0.5639 σ=9.677 -inf×15 (stats over 129 finite)");
  CHECK(attn::format_tensor_stats(masked_scores(), "encoder.0.attention.masked_scores", 3) ==
        "encoder.0.attention.masked_scores (B=2,H=2,S=6,S=6) n=144 x∈[-23.8, 24.8] μ=0.564 σ=9.68 -inf×15 "
        "(stats over 129 finite)");
}

TEST_CASE("every kind of non-finite value is counted", "[stats]") {
  attn::Tensor t({8});
  t.data = {0.5, -1.25, NAN, 3.0, INFINITY, -INFINITY, 2.75, NAN};
  const attn::TensorStats s = attn::compute_tensor_stats(t);
  CHECK(s.finite_count == 4);
  CHECK(s.negative_infinities == 1);
  CHECK(s.positive_infinities == 1);
  CHECK(s.nans == 2);
  CHECK(s.mean == 1.25);
  CHECK(s.std == Approx(1.741048534648015).epsilon(1e-15));
  CHECK(attn::format_tensor_stats(t) ==
        "tensor (8,) n=8 x∈[-1.25, 3] μ=1.25 σ=1.741 -inf×1 +inf×1 nan×2 (stats over 4 finite)");
}

TEST_CASE("all-finite tensors need no note, with hand-checked values", "[stats]") {
  // [1, 2, 3, 4]: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5, 5/4 = 1.25, √1.25 = 1.1180...
  attn::Tensor t({2, 2}, {"S", "N"});
  t.data = {1, 2, 3, 4};
  const attn::TensorStats s = attn::compute_tensor_stats(t);
  CHECK(s.mean == 2.5);
  CHECK(s.std == std::sqrt(1.25));
  CHECK(attn::format_tensor_stats(t, "X") == "X (S=2,N=2) n=4 x∈[1, 4] μ=2.5 σ=1.118");
}

TEST_CASE("no finite values, and an empty tensor", "[stats]") {
  attn::Tensor masked({3});
  masked.data = {-INFINITY, -INFINITY, NAN};
  const attn::TensorStats s = attn::compute_tensor_stats(masked);
  CHECK(s.finite_count == 0);
  CHECK(std::isnan(s.mean));
  CHECK(attn::format_tensor_stats(masked) == "tensor (3,) n=3 -inf×2 nan×1 (no finite values)");

  attn::Tensor empty({0, 4}, {"S", "N"});
  CHECK(attn::format_tensor_stats(empty) == "tensor (S=0,N=4) n=0 empty");
}

TEST_CASE("a constant tensor has zero spread, printed as 0", "[stats]") {
  attn::Tensor t({3});
  t.data = {-0.0, -0.0, -0.0};
  CHECK(attn::format_tensor_stats(t) == "tensor (3,) n=3 x∈[0, 0] μ=0 σ=0");
}
