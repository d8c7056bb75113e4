#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/product_kernel.h"
#include "kernels/matrix_kernel.h"

// Every build of the large product that this CPU runs (matrix_kernel.h), and Eigen's,
// which attn train runs, on the same products. The tolerance, docs/architecture.md's: each
// element within (K + 2) u of sum_k |a_ik b_kj| (u = 2^-53) of the exact sum, the classic
// bound for a sum of K rounded products; the reference is the same sum in long double
// (64-bit significand).

namespace {

std::vector<double> wave(std::size_t n, double step, double phase) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(step * static_cast<double>(i) + phase) * 3.0;
  return v;
}

struct Shape {
  std::size_t M, K, P;
  bool a_transposed, b_transposed;
};

// op(a) (M,K) @ op(b) (K,P) by `kernel`, a stored (K,M) when transposed and b (P,K).
std::vector<double> product_by(attn::ProductKernel kernel, const std::vector<double>& a, const std::vector<double>& b,
                               const Shape& s) {
  std::vector<double> c(s.M * s.P, -1.0);
  const attn::MatrixOperand A{a.data(), s.a_transposed ? s.M : s.K, s.a_transposed};
  const attn::MatrixOperand B{b.data(), s.b_transposed ? s.K : s.P, s.b_transposed};
  attn::large_matrix_product_by(kernel, A, B, c.data(), s.P, s.M, s.K, s.P);
  return c;
}

double at(const std::vector<double>& m, bool transposed, std::size_t rows, std::size_t columns, std::size_t r,
          std::size_t c) {
  return transposed ? m[c * rows + r] : m[r * columns + c];
}

// The largest difference of c from `reference` (null: the exact product), in units of the
// bound above: <= 1 passes against the exact product, <= 2 between two kernels (each
// within one bound of the exact product).
double worst_in_bounds(const std::vector<double>& c, const std::vector<double>& a, const std::vector<double>& b,
                       const Shape& s, const std::vector<double>* reference = nullptr) {
  const double u = std::ldexp(1.0, -53);
  double worst = 0;
  for (std::size_t i = 0; i < s.M; ++i)
    for (std::size_t j = 0; j < s.P; ++j) {
      long double exact = 0, magnitude = 0;
      for (std::size_t k = 0; k < s.K; ++k) {
        const long double term =
            static_cast<long double>(at(a, s.a_transposed, s.M, s.K, i, k)) * at(b, s.b_transposed, s.K, s.P, k, j);
        exact += term;
        magnitude += std::fabs(term);
      }
      if (reference != nullptr) exact = (*reference)[i * s.P + j];
      const double bound = static_cast<double>(s.K + 2) * u * static_cast<double>(magnitude);
      worst = std::max(worst, static_cast<double>(std::fabs(c[i * s.P + j] - exact)) / bound);
    }
  return worst;
}

const Shape kShapes[] = {
    {1, 300, 200, false, false}, {200, 300, 1, false, false}, {37, 61, 45, false, false}, {100, 600, 70, false, false},
    {130, 64, 129, false, true}, {61, 300, 37, true, false},  {13, 17, 19, true, true},   {300, 0, 5, false, false},
};

}  // namespace

TEST_CASE("every product kernel the CPU runs is within the documented bound of the exact product",
          "[kernels][product_kernels]") {
  for (const attn::ProductKernel kernel : attn::kAllProductKernels) {
    if (!attn::cpu_runs(kernel)) continue;
    for (const Shape& s : kShapes) {
      CAPTURE(attn::name_of(kernel), s.M, s.K, s.P, s.a_transposed, s.b_transposed);
      const std::vector<double> a = wave(s.M * s.K, 0.37, 0.1), b = wave(s.K * s.P, 0.11, 1.0);
      const std::vector<double> c = product_by(kernel, a, b, s);
      if (s.K == 0) {
        CHECK(c == std::vector<double>(s.M * s.P, 0.0));
        continue;
      }
      CHECK(worst_in_bounds(c, a, b, s) <= 1.0);
    }
  }
}

TEST_CASE("all product kernels give the exact product when every partial sum is exact", "[kernels][product_kernels]") {
  // Small integers: every product and partial sum is an integer far below 2^53, so each
  // kernel, with FMA or without, in any blocking, must give the integer sum exactly.
  const Shape s{70, 530, 50, false, false};  // K over two blocks of 256
  std::vector<double> a(s.M * s.K), b(s.K * s.P);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<double>(static_cast<int>(i * 7 % 13) - 6);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<double>(static_cast<int>(i * 5 % 11) - 5);
  std::vector<double> exact(s.M * s.P);
  for (std::size_t i = 0; i < s.M; ++i)
    for (std::size_t j = 0; j < s.P; ++j) {
      long long sum = 0;
      for (std::size_t k = 0; k < s.K; ++k)
        sum += static_cast<long long>(a[i * s.K + k]) * static_cast<long long>(b[k * s.P + j]);
      exact[i * s.P + j] = static_cast<double>(sum);
    }
  for (const attn::ProductKernel kernel : attn::kAllProductKernels) {
    if (!attn::cpu_runs(kernel)) continue;
    CAPTURE(attn::name_of(kernel));
    CHECK(product_by(kernel, a, b, s) == exact);
  }
}

TEST_CASE("every product kernel agrees with the baseline kernel within the documented bound",
          "[kernels][product_kernels]") {
  // What ATTN_CPU=baseline (every x86-64) and the kernel this CPU picks may differ by: at
  // most two bounds, one each side of the exact product. A product large enough to take
  // several blocks of 256 indices and of rows, both operands' layouts.
  const Shape shapes[] = {{300, 700, 260, false, false}, {150, 530, 90, true, false}, {70, 300, 140, false, true}};
  for (const Shape& s : shapes) {
    const std::vector<double> a = wave(s.M * s.K, 0.29, 0.2), b = wave(s.K * s.P, 0.07, 1.3);
    const std::vector<double> baseline = product_by(attn::ProductKernel::baseline, a, b, s);
    for (const attn::ProductKernel kernel : attn::kAllProductKernels) {
      if (!attn::cpu_runs(kernel)) continue;
      CAPTURE(attn::name_of(kernel), s.M, s.K, s.P, s.a_transposed, s.b_transposed);
      CHECK(worst_in_bounds(product_by(kernel, a, b, s), a, b, s, &baseline) <= 2.0);
    }
  }
}

TEST_CASE("the AVX2 and AVX-512 kernels sum in the same order and give the same bits", "[kernels][product_kernels]") {
  if (!attn::cpu_runs(attn::ProductKernel::avx512)) {
    // Nothing to compare on a CPU without AVX-512: there the AVX-512 kernel must be refused, never run.
    CHECK(attn::choose_product_kernel("avx512").has_value());
    return;
  }
  for (const Shape& s : kShapes) {
    CAPTURE(s.M, s.K, s.P);
    const std::vector<double> a = wave(s.M * s.K, 0.23, 0.4), b = wave(s.K * s.P, 0.19, 2.0);
    const std::vector<double> x = product_by(attn::ProductKernel::avx2, a, b, s);
    const std::vector<double> y = product_by(attn::ProductKernel::avx512, a, b, s);
    CHECK(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0);
  }
}

TEST_CASE("ATTN_CPU names the kernel that runs, and an unknown or unavailable one is refused",
          "[kernels][product_kernels]") {
  // Under the ctest entry kernels.baseline (ATTN_CPU=baseline), the baseline kernel runs.
  const char* request = std::getenv("ATTN_CPU");
  if (request != nullptr && *request != '\0') CHECK(std::string(attn::product_kernel_name()) == request);
  const std::string before = attn::product_kernel_name();

  const auto unknown = attn::choose_product_kernel("sse9");
  REQUIRE(unknown.has_value());
  CHECK(*unknown == "attn: ATTN_CPU=sse9: expected baseline, avx2 or avx512 (or unset: the best this CPU runs)");
  CHECK(attn::product_kernel_name() == before);  // nothing chosen

  REQUIRE_FALSE(attn::choose_product_kernel("baseline").has_value());
  CHECK(std::string(attn::product_kernel_name()) == "baseline");
  if (!attn::cpu_runs(attn::ProductKernel::avx512)) {
    const auto lacking = attn::choose_product_kernel("avx512");
    REQUIRE(lacking.has_value());
    CHECK(lacking->find("this CPU lacks the instructions of the avx512 kernel") != std::string::npos);
  }
  REQUIRE_FALSE(attn::choose_product_kernel(before.c_str()).has_value());
  CHECK(attn::product_kernel_name() == before);
}

TEST_CASE("attn train's kernel is Eigen's, whatever ATTN_CPU chose", "[kernels][product_kernels]") {
  const std::string before = attn::product_kernel_name();
  REQUIRE(before != "eigen");
  attn::use_training_product_kernel();
  CHECK(std::string(attn::product_kernel_name()) == "eigen");
  // It is no name ATTN_CPU takes.
  const auto refused = attn::choose_product_kernel("eigen");
  REQUIRE(refused.has_value());
  CHECK(*refused == "attn: ATTN_CPU=eigen: expected baseline, avx2 or avx512 (or unset: the best this CPU runs)");
  // The products now go through Eigen: its bits, not the chosen kernel's.
  const Shape s{100, 600, 70, false, false};
  const std::vector<double> a = wave(s.M * s.K, 0.37, 0.1), b = wave(s.K * s.P, 0.11, 1.0);
  std::vector<double> c(s.M * s.P);
  attn::large_matrix_product(a.data(), s.K, b.data(), s.P, c.data(), s.P, s.M, s.K, s.P);
  CHECK(c == product_by(attn::ProductKernel::eigen, a, b, s));
  REQUIRE_FALSE(attn::choose_product_kernel(before.c_str()).has_value());
  CHECK(attn::product_kernel_name() == before);
}

TEST_CASE("a row multiplied alone gives the same bits as in a larger product", "[kernels][product_kernels]") {
  // Fewer rows than a tile read b in place instead of packing it (a generated token's
  // row, a short prompt's), as stored or transposed (a (P,K) weight); the sums are in the same order, so the
  // bits are those of the tiled product. K = 301 leaves a block of kKc and 45 indices (not
  // a multiple of four); P = 45 leaves columns past the last whole pass.
  for (const bool transposed : {false, true}) {
    const Shape whole{40, 301, 45, false, transposed};
    const std::vector<double> a = wave(whole.M * whole.K, 0.41, 0.3), b = wave(whole.K * whole.P, 0.13, 0.7);
    for (const attn::ProductKernel kernel : attn::kProductKernels) {  // Eigen's has its own paths
      if (!attn::cpu_runs(kernel)) continue;
      CAPTURE(attn::name_of(kernel), transposed);
      const std::vector<double> c = product_by(kernel, a, b, whole);
      // one row to five, fewer than any tile's (four at a time, then two, then one)
      for (const auto& [first, rows] : {std::pair<std::size_t, std::size_t>{0, 1}, {7, 2}, {11, 3}, {20, 5}, {36, 4}}) {
        const std::vector<double> part(a.begin() + static_cast<std::ptrdiff_t>(first * whole.K),
                                       a.begin() + static_cast<std::ptrdiff_t>((first + rows) * whole.K));
        const std::vector<double> alone = product_by(kernel, part, b, {rows, whole.K, whole.P, false, transposed});
        CAPTURE(first, rows);
        CHECK(std::memcmp(alone.data(), c.data() + first * whole.P, rows * whole.P * sizeof(double)) == 0);
      }
    }
  }
}
