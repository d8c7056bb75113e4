#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

using Catch::Matchers::WithinRel;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// rows x T scores in [-40, 40], a masked key here and there, a few rows with keys far
// below the row's maximum (weights under exp(-708)) and one row fully masked.
std::vector<double> scores(std::size_t rows, std::size_t T) {
  std::vector<double> s(rows * T);
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = 40.0 * std::sin(0.013 * static_cast<double>(i * i % 1009));
  for (std::size_t i = 5; i < s.size(); i += 97) s[i] = -kInf;
  for (std::size_t i = 3; i < s.size(); i += 11) s[i] -= 800.0;
  if (rows > 2)
    std::fill(s.begin() + static_cast<std::ptrdiff_t>(2 * T), s.begin() + static_cast<std::ptrdiff_t>(3 * T), -kInf);
  return s;
}

// The softmax of the rows copied to `in_offset` doubles into one buffer, written to
// `out_offset` doubles into another: the same numbers at other addresses.
std::vector<double> softmax_at(const std::vector<double>& s, std::size_t rows, std::size_t T, std::size_t in_offset,
                               std::size_t out_offset, std::size_t* masked) {
  std::vector<double> in(s.size() + 16, 0.0), out(s.size() + 16, 0.0);
  std::copy(s.begin(), s.end(), in.begin() + static_cast<std::ptrdiff_t>(in_offset));
  *masked = attn::softmax_rows_fast(in.data() + in_offset, out.data() + out_offset, rows, T);
  return {out.begin() + static_cast<std::ptrdiff_t>(out_offset),
          out.begin() + static_cast<std::ptrdiff_t>(out_offset + s.size())};
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("the fast softmax gives the same bits wherever the rows sit in memory", "[kernels][softmax]") {
  // Row lengths around the vector width (8 doubles with AVX-512, 4 with AVX2), and the
  // walkthrough's sizes; every offset of the input and the output within 64 bytes. The
  // first size, 2048 x 512 = 1M scores, is split between the threads.
  const std::size_t sizes[][2] = {{2048, 512}, {64, 131}, {300, 300}, {40, 9}, {40, 7}, {40, 1}, {10, 4096}};
  for (const auto& size : sizes) {
    const std::size_t rows = size[0], T = size[1];
    CAPTURE(rows, T);
    const std::vector<double> s = scores(rows, T);
    std::size_t masked0 = 0;
    const std::vector<double> first = softmax_at(s, rows, T, 0, 0, &masked0);
    std::size_t all_minus_inf = 0;  // row 2, and with T = 1 the rows of a single masked key
    for (std::size_t r = 0; r < rows; ++r)
      all_minus_inf +=
          std::all_of(s.begin() + static_cast<std::ptrdiff_t>(r * T),
                      s.begin() + static_cast<std::ptrdiff_t>((r + 1) * T), [](double v) { return v == -kInf; });
    CHECK(masked0 == all_minus_inf);
    CHECK(masked0 >= 1);
    for (std::size_t in_offset = 0; in_offset < 8; ++in_offset) {
      std::size_t masked = 0;
      const std::vector<double> w = softmax_at(s, rows, T, in_offset, (in_offset * 5 + 3) % 8, &masked);
      CAPTURE(in_offset);
      CHECK(same_bits(w, first));
      CHECK(masked == masked0);
    }
  }
}

TEST_CASE("the fast softmax agrees with exp(x - max) / sum to the last bits", "[kernels][softmax]") {
  const std::size_t rows = 64, T = 131;
  const std::vector<double> s = scores(rows, T);
  std::vector<double> w(s.size());
  CHECK(attn::softmax_rows_fast(s.data(), w.data(), rows, T) == 1);
  for (std::size_t r = 0; r < rows; ++r) {
    const double* x = s.data() + r * T;
    const double* y = w.data() + r * T;
    double max = -kInf, sum = 0, total = 0;
    for (std::size_t j = 0; j < T; ++j) max = std::max(max, x[j]);
    if (max == -kInf) {  // row 2: every key masked, zero weights
      for (std::size_t j = 0; j < T; ++j) CHECK(y[j] == 0.0);
      continue;
    }
    for (std::size_t j = 0; j < T; ++j) sum += std::exp(x[j] - max);
    for (std::size_t j = 0; j < T; ++j) {
      total += y[j];
      const double expected = std::exp(x[j] - max) / sum;
      if (x[j] - max < -708.0) {
        CHECK(y[j] == 0.0);  // below exp(-708): exactly 0, never a subnormal
      } else {
        CHECK_THAT(y[j], WithinRel(expected, 1e-14));
      }
    }
    CHECK_THAT(total, WithinRel(1.0, 1e-14));
  }
}

TEST_CASE("the fast softmax of a hand-worked row", "[kernels][softmax]") {
  // [ln 1, ln 2, ln 3, ln 4, -inf] -> [1, 2, 3, 4, 0] / 10; nine such rows so that every
  // lane of a packet and the padded tail see them
  std::vector<double> s;
  for (int r = 0; r < 9; ++r) s.insert(s.end(), {0.0, std::log(2.0), std::log(3.0), std::log(4.0), -kInf});
  std::vector<double> w(s.size());
  CHECK(attn::softmax_rows_fast(s.data(), w.data(), 9, 5) == 0);
  for (std::size_t i = 0; i < w.size(); i += 5) {
    CHECK_THAT(w[i], WithinRel(0.1, 1e-15));
    CHECK_THAT(w[i + 1], WithinRel(0.2, 1e-15));
    CHECK_THAT(w[i + 2], WithinRel(0.3, 1e-15));
    CHECK_THAT(w[i + 3], WithinRel(0.4, 1e-15));
    CHECK(w[i + 4] == 0.0);
  }
}
