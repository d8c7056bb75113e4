// A weight in panels (attn/tensor.h's StoredMatrix::in_panels): its numbers where the layout
// puts them, read back by at(), and multiplied by every product kernel the CPU runs and by
// the threaded product with the bits of the same product on the weight widened first, for
// F64, F32, F16 and BF16, made from a matrix stored as read and from a transposed one.
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "same_bits.h"
#include "stored_cases.h"

#include "attn/tensor.h"
#include "kernels/matmul.h"
#include "kernels/matrix_kernel.h"
#include "steps/projection.h"

namespace {

using attn_test::same_bits;

// n numbers of `type` (finite, signs and magnitudes varied) and the float64 each one is.
struct Numbers {
  std::vector<unsigned char> bytes;
  std::vector<double> widened;
};
Numbers numbers(attn::StoredType type, std::size_t n) {
  const std::size_t size = attn::stored_type_bytes(type);
  Numbers s;
  s.bytes.assign(n * size, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t r = static_cast<std::uint32_t>(i * 2654435761U + 777U);
    unsigned char* at = s.bytes.data() + i * size;
    if (type == attn::StoredType::F64) {
      const double v = (static_cast<double>(r % 20001) - 10000.0) / 7.0e3;
      std::memcpy(at, &v, 8);
    } else if (type == attn::StoredType::F32) {
      const float v = (static_cast<float>(r % 20001) - 10000.0F) / 7.0e3F;
      std::memcpy(at, &v, 4);
    } else {
      const std::uint16_t bits = static_cast<std::uint16_t>((r >> 9) & 0xbbff);  // finite in both formats
      std::memcpy(at, &bits, 2);
    }
    s.widened.push_back(attn::widen_number(s.bytes.data(), type, i));
  }
  return s;
}

// The (K, P) matrix of b's numbers as read: stored (K, P), or (P, K) read transposed.
attn::StoredMatrix as_read(const Numbers& b, attn::StoredType type, std::size_t K, std::size_t P, bool transposed) {
  attn::StoredMatrix m;
  m.bytes = b.bytes.data();
  m.type = type;
  m.stride = transposed ? K : P;
  m.transposed = transposed;
  return m;
}

}  // namespace

TEST_CASE("panels put a BF16 line's 32-bit pairs as columns t and 16 + t, zeros past the last column",
          "[kernels][panels]") {
  // a (2, 40) BF16 matrix whose number (k, p) has the bits 0x100 k + p: two panels of 32
  // columns, the second holding columns 32..39 and 24 zeros
  std::vector<std::uint16_t> bits(2 * 40);
  for (std::size_t k = 0; k < 2; ++k)
    for (std::size_t p = 0; p < 40; ++p) bits[k * 40 + p] = static_cast<std::uint16_t>(0x100 * k + p);
  attn::StoredMatrix m;
  m.bytes = reinterpret_cast<const unsigned char*>(bits.data());
  m.type = attn::StoredType::BF16;
  m.stride = 40;
  const attn::StoredMatrix panels = m.in_panels(2, 40);
  REQUIRE(panels.panel == 32);
  REQUIRE(panels.stride == 2);
  std::uint16_t line[32];
  // panel 0, k = 1: pair t holds column t (low half) and column 16 + t (high half)
  std::memcpy(line, panels.bytes + 64 * 1, 64);
  CHECK(line[0] == 0x100);
  CHECK(line[1] == 0x110);
  CHECK(line[2] == 0x101);
  CHECK(line[31] == 0x11f);
  // panel 1, k = 0: columns 32..39 at 0, 2, ..., 14; the rest zero
  std::memcpy(line, panels.bytes + 64 * 2, 64);
  CHECK(line[0] == 32);
  CHECK(line[14] == 39);
  CHECK(line[1] == 0);
  CHECK(line[16] == 0);
  // F32: columns in order, 16 a line
  std::vector<float> f(3 * 20);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i);
  attn::StoredMatrix g;
  g.bytes = reinterpret_cast<const unsigned char*>(f.data());
  g.type = attn::StoredType::F32;
  g.stride = 20;
  const attn::StoredMatrix gp = g.in_panels(3, 20);
  float fl[16];
  std::memcpy(fl, gp.bytes + 64 * 4, 64);  // panel 1 (columns 16..19), k = 1
  CHECK(fl[0] == 36.0F);
  CHECK(fl[3] == 39.0F);
  CHECK(fl[4] == 0.0F);
}

TEST_CASE("a weight in panels reads back every number, as read and transposed", "[kernels][panels]") {
  for (const attn::StoredType type : attn_test::kStoredTypes)
    for (const bool transposed : {false, true}) {
      const std::size_t K = 37, P = 45;
      const Numbers b = numbers(type, K * P);
      const attn::StoredMatrix m = as_read(b, type, K, P, transposed);
      const attn::StoredMatrix panels = m.in_panels(K, P), turned = panels.transpose();
      std::vector<double> row(P);
      for (std::size_t k = 0; k < K; ++k) {
        panels.widen_row(k, P, row.data());
        for (std::size_t p = 0; p < P; ++p) {
          REQUIRE(row[p] == m.at(k, p));
          REQUIRE(turned.at(p, k) == m.at(k, p));
        }
      }
    }
}

TEST_CASE("a weight in panels gives every kernel's bits of the widened one", "[kernels][panels][product_kernels]") {
  struct Case {
    std::size_t M, K, P;
  };
  // a token's row and a prompt's (up to 64 rows read the panels; 65 pack them), K past a
  // block of 256 and short, P leaving a partial panel of each type
  const Case cases[] = {{1, 300, 70}, {3, 600, 37},  {7, 513, 129}, {12, 61, 45},  {13, 259, 33},
                        {40, 7, 20},  {64, 100, 17}, {65, 300, 50}, {1, 1024, 16}, {2, 2, 96}};
  for (const attn::ProductKernel kernel : attn::kProductKernels) {
    if (!attn::cpu_runs(kernel)) continue;
    for (const attn::StoredType type : attn_test::kStoredTypes)
      for (const bool transposed : {false, true})
        for (const Case& c : cases) {
          INFO(attn::name_of(kernel) << " type " << static_cast<int>(type) << " " << c.M << "x" << c.K << "x" << c.P
                                     << (transposed ? " from a transposed matrix" : ""));
          std::vector<double> a(c.M * c.K);
          for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.001 * static_cast<double>((i * 7919) % 1999) - 1.0;
          const Numbers b = numbers(type, c.K * c.P);
          const attn::StoredMatrix m = as_read(b, type, c.K, c.P, transposed);
          std::vector<double> w(c.K * c.P);
          for (std::size_t k = 0; k < c.K; ++k)
            for (std::size_t p = 0; p < c.P; ++p) w[k * c.P + p] = m.at(k, p);
          const attn::StoredMatrix panels = m.in_panels(c.K, c.P);
          std::vector<double> widened(c.M * c.P, -1.0), read(c.M * c.P, -2.0);
          const attn::MatrixOperand A{a.data(), c.K, false};
          attn::large_matrix_product_by(kernel, A, attn::MatrixOperand{w.data(), c.P, false}, widened.data(), c.P, c.M,
                                        c.K, c.P);
          attn::large_matrix_product_by(kernel, A, attn::stored_operand(panels, 0), read.data(), c.P, c.M, c.K, c.P);
          CHECK(same_bits(read, widened));
        }
  }
}

TEST_CASE("matmul on a weight in panels: the bits of matmul on the widened weight, threaded or not",
          "[kernels][panels][projection]") {
  // (1, 768, 2304): pieces on two threads, each starting at a panel; (2, 3, 4): the reference loop
  attn_test::for_each_stored_product(
      {{1, 768, 2304}, {7, 256, 520}, {2, 300, 700}, {2, 3, 4}},
      [](attn::StoredType type, std::size_t M, std::size_t K, std::size_t P, bool transposed) {
        std::vector<double> a(M * K);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.37 * static_cast<double>(i % 17) - 2.5;
        const Numbers b = numbers(type, K * P);
        const attn::StoredMatrix m = as_read(b, type, K, P, transposed);
        std::vector<double> expected(M * P), actual(M * P);
        attn::matmul(a.data(), m, expected.data(), M, K, P);
        attn::matmul(a.data(), m.in_panels(K, P), actual.data(), M, K, P);
        CHECK(same_bits(actual, expected));
      });
}

TEST_CASE("in_panels reads a transposed matrix's stored rows through, 64 panels at a time", "[kernels][panels]") {
  // (K, P) = (5, 2100) read from a BF16 (2100, 5) stored with a stride of 7: 66 panels of 32
  // columns; the first 64 copy stored rows 0..2047, the last two rows 2048..2099
  const std::size_t K = 5, P = 2100, stride = 7;
  std::vector<std::uint16_t> bits(P * stride, 0x3f80);
  attn::StoredMatrix m;
  m.bytes = reinterpret_cast<const unsigned char*>(bits.data());
  m.type = attn::StoredType::BF16;
  m.stride = stride;
  m.transposed = true;
  std::vector<std::pair<std::ptrdiff_t, std::size_t>> runs;
  const auto record = [&](const unsigned char* from, std::size_t bytes) { runs.emplace_back(from - m.bytes, bytes); };
  const attn::StoredMatrix panels = m.in_panels(K, P, record);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].first == 0);
  CHECK(runs[0].second == 2 * (2047 * stride + K));
  CHECK(runs[1].first == static_cast<std::ptrdiff_t>(2 * 2048 * stride));
  CHECK(runs[1].second == 2 * (51 * stride + K));
  CHECK(panels.at(4, 2099) == 1.0);
  // read as stored (not transposed), a panel's columns cut across every stored row: none
  runs.clear();
  attn::StoredMatrix rows = m;
  rows.transposed = false;
  rows.stride = P;
  (void)rows.in_panels(1, P, record);
  CHECK(runs.empty());
}
