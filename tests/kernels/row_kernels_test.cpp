#include "kernels/rows.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "same_bits.h"

using Catch::Matchers::WithinRel;

namespace {

using attn_test::same_bits;

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

namespace {
void check_against_reference(const std::vector<double>& s, const std::vector<double>& w, std::size_t rows,
                             std::size_t T) {
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
}  // namespace

TEST_CASE("the fast softmax agrees with exp(x - max) / sum to the last bits", "[kernels][softmax]") {
  const std::size_t rows = 64, T = 131;
  const std::vector<double> s = scores(rows, T);
  std::vector<double> w(s.size());
  for (const attn::ProductKernel isa : {attn::ProductKernel::baseline, attn::ProductKernel::avx2,
                                        attn::ProductKernel::avx512, attn::chosen_product_kernel()}) {
    if (!attn::cpu_runs(isa)) continue;
    CAPTURE(attn::name_of(isa));
    if (isa == attn::chosen_product_kernel())
      CHECK(attn::softmax_rows_fast(s.data(), w.data(), rows, T) == 1);
    else
      CHECK(attn::softmax_rows_by(isa, s.data(), w.data(), rows, T) == 1);
    check_against_reference(s, w, rows, T);
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

namespace {

constexpr attn::ProductKernel kIsas[] = {attn::ProductKernel::baseline, attn::ProductKernel::avx2,
                                         attn::ProductKernel::avx512};

std::int64_t ordered_bits(double x) {  // float64s in order as integers, for ulp distances
  std::int64_t i;
  std::memcpy(&i, &x, sizeof i);
  return i < 0 ? std::numeric_limits<std::int64_t>::min() - i : i;
}

// The sweep of docs/architecture.md: 2^20 points evenly over [-708, 0], then 2^16 over
// [-1, 0] and [-1e-3, 0], where exp is near 1 and an ulp is smallest relative to x.
std::vector<double> exp_sweep() {
  std::vector<double> x;
  const double ranges[] = {708.0, 1.0, 1e-3};
  const std::size_t counts[] = {std::size_t{1} << 20, std::size_t{1} << 16, std::size_t{1} << 16};
  for (int k = 0; k < 3; ++k)
    for (std::size_t i = 0; i < counts[k]; ++i)
      x.push_back(-ranges[k] * (static_cast<double>(i) + 0.37) / static_cast<double>(counts[k]));
  x.push_back(0.0);
  x.push_back(-708.0);
  return x;
}

}  // namespace

TEST_CASE("the softmax's exp is within an ulp of std::exp over [-708, 0], every instruction set",
          "[kernels][softmax]") {
  const std::vector<double> x = exp_sweep();
  for (const attn::ProductKernel isa : kIsas) {
    if (!attn::cpu_runs(isa)) continue;
    CAPTURE(attn::name_of(isa));
    std::vector<double> y(x.size());
    attn::exp_shifted_by(isa, x.data(), 0.0, y.data(), x.size());
    std::int64_t max_ulps = 0;
    double max_error = 0;  // against long double's expl (64-bit significand), in ulps of the result
    std::size_t differing = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const std::int64_t d = ordered_bits(y[i]) - ordered_bits(std::exp(x[i]));
      max_ulps = std::max(max_ulps, d < 0 ? -d : d);
      differing += d != 0;
      const long double exact = std::exp(static_cast<long double>(x[i]));
      const double ulp = std::ldexp(1.0, std::ilogb(static_cast<double>(exact)) - 52);
      max_error = std::max(max_error, static_cast<double>(std::fabs((y[i] - exact) / ulp)));
    }
    CHECK(max_ulps <= 1);
    CHECK(max_error < 0.51);  // measured 0.509 (glibc's std::exp: 0.505)
    CHECK(differing < x.size() / 100);
    CHECK(y.back() == std::exp(-708.0));  // 3.3e-308, still a normal number
    CHECK(y[x.size() - 2] == 1.0);        // exp(0) exactly
  }
}

TEST_CASE("the softmax's exp of -inf, NaN and arguments below -708", "[kernels][softmax]") {
  const double x[] = {-kInf, -708.5, -745.0, std::nan(""), -0.6931471805599453, 2.0};
  for (const attn::ProductKernel isa : kIsas) {
    if (!attn::cpu_runs(isa)) continue;
    CAPTURE(attn::name_of(isa));
    double y[6];
    attn::exp_shifted_by(isa, x, 2.0, y, 6);  // x - 2
    CHECK(y[0] == 0.0);
    CHECK(y[1] == 0.0);  // exp(-710.5): below exp(-708), 0 rather than a subnormal
    CHECK(y[2] == 0.0);
    CHECK(std::isnan(y[3]));
    CHECK_THAT(y[4], WithinRel(0.5 * std::exp(-2.0), 1e-15));  // exp(-ln 2 - 2)
    CHECK(y[5] == 1.0);
  }
}

TEST_CASE("every instruction set's softmax and ReLU give the baseline's bits", "[kernels][softmax]") {
  const std::size_t rows = 64, T = 131;
  const std::vector<double> s = scores(rows, T);
  std::vector<double> base(s.size());
  const std::size_t base_masked = attn::softmax_rows_by(attn::ProductKernel::baseline, s.data(), base.data(), rows, T);
  CHECK(base_masked == 1);
  std::vector<double> relu_base = s;
  attn::relu_by(attn::ProductKernel::baseline, relu_base.data(), relu_base.size());
  for (const attn::ProductKernel isa : kIsas) {
    if (!attn::cpu_runs(isa)) continue;
    CAPTURE(attn::name_of(isa));
    std::vector<double> w(s.size());
    CHECK(attn::softmax_rows_by(isa, s.data(), w.data(), rows, T) == base_masked);
    CHECK(same_bits(w, base));
    std::vector<double> h = s;
    attn::relu_by(isa, h.data(), h.size());
    CHECK(same_bits(h, relu_base));
  }
}

TEST_CASE("ReLU by every instruction set against the plain loop", "[kernels]") {
  // Lengths around the vector widths; negative zero, NaN, infinities, subnormals.
  std::vector<double> x = {-0.0, 0.0, std::nan(""), kInf, -kInf, 4.9e-324, -4.9e-324, 1.5, -2.25};
  for (int i = 0; i < 30; ++i) x.push_back(3.0 * std::sin(0.7 * i));
  for (const attn::ProductKernel isa : kIsas) {
    if (!attn::cpu_runs(isa)) continue;
    CAPTURE(attn::name_of(isa));
    for (std::size_t n = 0; n <= x.size(); ++n) {
      std::vector<double> h(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
      attn::relu_by(isa, h.data(), n);
      for (std::size_t i = 0; i < n; ++i) {
        const double expected = x[i] > 0 ? x[i] : 0.0;
        CHECK(std::memcmp(&h[i], &expected, sizeof expected) == 0);  // +0.0, never -0.0
      }
    }
    std::vector<double> h = {-1.0, 2.0, -0.0, std::nan("")};
    attn::relu_by(isa, h.data(), 4);
    CHECK(h == std::vector<double>{0.0, 2.0, 0.0, 0.0});
    CHECK(!std::signbit(h[2]));
  }
}
