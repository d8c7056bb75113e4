// The activation kernels (kernels/rows.h) against the plain formulas they replaced, the
// reference loop of steps/feed_forward.cpp before them: std::exp, std::tanh and std::erf,
// element by element. The bounds asserted here are the ones rows.h documents.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "kernels/rows.h"

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr attn::ProductKernel kIsas[] = {attn::ProductKernel::baseline, attn::ProductKernel::avx2,
                                         attn::ProductKernel::avx512};

// The reference formulas, as steps/feed_forward.cpp computed them element by element.
double silu_reference(double x) { return x / (1.0 + std::exp(-x)); }
double gelu_reference(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_reference(double x) {
  const double u = std::sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + std::tanh(u));
}

std::int64_t ordered_bits(double x) {  // float64s in order as integers, for ulp distances
  std::int64_t i;
  std::memcpy(&i, &x, sizeof i);
  return i < 0 ? std::numeric_limits<std::int64_t>::min() - i : i;
}
std::int64_t ulps_apart(double a, double b) {
  const std::int64_t d = ordered_bits(a) - ordered_bits(b);
  return d < 0 ? -d : d;
}
double ulp_of(double x) { return std::ldexp(1.0, std::ilogb(x) - 52); }

// 2^22 points evenly over [-40, 40], 2^20 over [-1, 1], where the activations bend, and the
// special values: signed zeros, infinities, NaN, huge and subnormal inputs, the edges of
// exp's range (-708, 709.78).
std::vector<double> activation_sweep() {
  std::vector<double> x;
  const double ranges[] = {40.0, 1.0};
  const std::size_t counts[] = {std::size_t{1} << 22, std::size_t{1} << 20};
  for (int k = 0; k < 2; ++k)
    for (std::size_t i = 0; i < counts[k]; ++i)
      x.push_back(ranges[k] * (2 * (static_cast<double>(i) + 0.37) / static_cast<double>(counts[k]) - 1));
  for (double v : {0.0, 1e-300, 4.9e-324, 1e-310, 1e300, 1e150, 1e103, 700.0, 708.0, 708.5, 709.7, 709.8, 710.0, 745.0,
                   800.0, 1e5, kInf})
    x.insert(x.end(), {v, -v});
  x.push_back(std::nan(""));
  return x;
}

// The largest distance from the reference in ulps of the result, over the x the predicate
// keeps.
template <class Reference, class Keep>
std::int64_t max_ulps(const std::vector<double>& x, const std::vector<double>& y, Reference reference, Keep keep) {
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (keep(x[i])) worst = std::max(worst, ulps_apart(y[i], reference(x[i])));
  return worst;
}

}  // namespace

TEST_CASE("SiLU's kernel is within 3 ulps of x / (1 + std::exp(-x)), every instruction set", "[kernels][activation]") {
  const std::vector<double> x = activation_sweep();
  for (const attn::ProductKernel isa : kIsas) {
    if (!attn::cpu_runs(isa)) continue;
    CAPTURE(attn::name_of(isa));
    std::vector<double> y = x;
    attn::silu_by(isa, y.data(), y.size());
    // NaN for NaN and -inf (-inf / inf), as the reference; every other value, the signed
    // zeros and infinities included, within 3 ulps
    CHECK(max_ulps(x, y, silu_reference, [](double v) { return !std::isnan(silu_reference(v)); }) <= 3);
    for (std::size_t i = 0; i < x.size(); ++i)
      if (std::isnan(silu_reference(x[i]))) CHECK(std::isnan(y[i]));
  }
}

TEST_CASE("GELU-tanh's kernel against 0.5 x (1 + std::tanh(u)), every instruction set", "[kernels][activation]") {
  const std::vector<double> x = activation_sweep();
  for (const attn::ProductKernel isa : kIsas) {
    if (!attn::cpu_runs(isa)) continue;
    CAPTURE(attn::name_of(isa));
    std::vector<double> y = x;
    attn::gelu_tanh_by(isa, y.data(), y.size());
    // From -1 up, within 4 ulps of the result
    CHECK(max_ulps(x, y, gelu_tanh_reference, [](double v) { return v >= -1; }) <= 4);
    // Below, the reference's 1 + tanh(u) cancels (tanh(u) near -1 keeps its error of up to
    // an ulp of 1): both differ from the exact value by about 2^-53 |x|, and from each other
    // by at most 2 ulps of x; where the reference's tanh(u) is -1 it gives -0 and the kernel
    // the true tiny value (-1.2e-37 at x = -10; -0 too from x = -21.2 down)
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double reference = gelu_tanh_reference(x[i]);
      if (std::isnan(reference)) {  // NaN and -inf (-inf · 0)
        CHECK(std::isnan(y[i]));
      } else if (std::isinf(x[i]) || x[i] == 0) {
        CHECK(ulps_apart(y[i], reference) == 0);
      } else if (x[i] < -1) {
        CHECK(std::signbit(y[i]));
        worst = std::max(worst, std::fabs(y[i] - reference) / ulp_of(x[i]));
      }
    }
    CHECK(worst <= 2.0);
  }
}

TEST_CASE("GELU's kernel against 0.5 x (1 + std::erf(x / sqrt 2)), every instruction set", "[kernels][activation]") {
  const std::vector<double> x = activation_sweep();
  for (const attn::ProductKernel isa : kIsas) {
    if (!attn::cpu_runs(isa)) continue;
    CAPTURE(attn::name_of(isa));
    std::vector<double> y = x;
    attn::gelu_erf_by(isa, y.data(), y.size());
    // Where x / sqrt 2 > -0.84375 (x > -1.19), the reference's bits below x = 1.77 (erf's
    // pieces without an exp) and with the same zeros, infinities and NaNs; from 1.77 up,
    // within an ulp (erfc's exp is attn's: 1 - erfc rounds the other way now and then)
    const auto upper = [](double v) { return v / std::sqrt(2.0) > -0.84375 || std::isnan(v); };
    std::size_t differing = 0;
    std::int64_t worst_above = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double reference = gelu_reference(x[i]);
      if (std::isnan(reference)) {
        CHECK(std::isnan(y[i]));
      } else if (upper(x[i]) && x[i] / std::sqrt(2.0) < 1.25) {
        differing += std::memcmp(&y[i], &reference, sizeof reference) != 0;
      } else if (upper(x[i]) || std::isinf(x[i])) {
        worst_above = std::max(worst_above, ulps_apart(y[i], reference));
      }
    }
    CHECK(worst_above <= 1);
    CHECK(differing == 0);
    // Below, 1 + erf(z) is erfc(|z|) without the reference's cancellation: at most 0.3125 ulp
    // of x apart, the same sign (-7.6e-23 at x = -10, where the reference's erf is -1 and
    // its result -0)
    double worst = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!upper(x[i]) && !std::isinf(x[i])) {
        CHECK(std::signbit(y[i]));
        worst = std::max(worst, std::fabs(y[i] - gelu_reference(x[i])) / ulp_of(x[i]));
      }
    CHECK(worst <= 0.3125);  // measured (0.5 at most: half an ulp of erf near -1, times x / 2)
  }
}

TEST_CASE("every instruction set's SiLU, GELU-tanh and GELU give the baseline's bits, at any length",
          "[kernels][activation]") {
  // 2^16 of the sweep's points in a scrambled order, so that neighbours come from all over
  // [-40, 40] (GELU's kernel puts the values that need erfc apart), then every 37th point
  // in order: every way through the kernels
  const std::vector<double> sweep = activation_sweep();
  std::vector<double> x;
  for (std::size_t i = 0; i < std::size_t{1} << 16; ++i) x.push_back(sweep[(i * 40503) % sweep.size()]);
  for (std::size_t i = 0; i < sweep.size(); i += 37) x.push_back(sweep[i]);
  x.insert(x.end(), {-0.0, 0.0, std::nan(""), kInf, -kInf, 4.9e-324, -4.9e-324, 1e300, -1e300, -709.9, 709.9});
  for (void (*kernel)(attn::ProductKernel, double*, std::size_t) :
       {attn::silu_by, attn::gelu_tanh_by, attn::gelu_erf_by}) {
    std::vector<double> base = x;
    kernel(attn::ProductKernel::baseline, base.data(), base.size());
    for (const attn::ProductKernel isa : kIsas) {
      if (!attn::cpu_runs(isa)) continue;
      CAPTURE(attn::name_of(isa));
      std::vector<double> y = x;
      kernel(isa, y.data(), y.size());
      CHECK(std::memcmp(y.data(), base.data(), y.size() * sizeof(double)) == 0);
      // lengths around the vector widths, at every offset: the remainder loop's values too
      const std::size_t tail = x.size() - 11;
      for (std::size_t n = 1; n <= 11; ++n) {
        std::vector<double> part(x.begin() + static_cast<std::ptrdiff_t>(tail),
                                 x.begin() + static_cast<std::ptrdiff_t>(tail + n));
        kernel(isa, part.data(), n);
        CHECK(std::memcmp(part.data(), base.data() + tail, n * sizeof(double)) == 0);
      }
    }
  }
}
