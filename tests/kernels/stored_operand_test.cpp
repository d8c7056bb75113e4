// A weight left where a checkpoint stores it (attn/tensor.h's StoredMatrix) multiplied by
// every product kernel the CPU runs, and by the threaded and reference products: the bits of
// the same product on the matrix widened to float64 first, for F64, F32, F16 and BF16, read
// as stored and transposed, in rows fewer than a tile (a generated token's) and more.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
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

struct Stored {
  std::vector<unsigned char> bytes;
  std::vector<double> widened;  // the same numbers, in the same layout
};

// n numbers of `type`, varied (signs, magnitudes, F16 subnormals), at an odd address
// (bytes[1]), as a header of any length leaves them.
Stored numbers(attn::StoredType type, std::size_t n) {
  const std::size_t size = attn::stored_type_bytes(type);
  Stored s;
  s.bytes.assign(1 + n * size, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t r = static_cast<std::uint32_t>(i * 2654435761U + 12345U);
    unsigned char* at = s.bytes.data() + 1 + i * size;
    double value = 0;
    if (type == attn::StoredType::F64) {
      value = (static_cast<double>(r % 20001) - 10000.0) / 3.0e3;
      std::memcpy(at, &value, 8);
    } else if (type == attn::StoredType::F32) {
      const float f = (static_cast<float>(r % 20001) - 10000.0F) / 3.0e3F;
      std::memcpy(at, &f, 4);
      value = f;
    } else {
      // any pattern but the exponent's all-ones (non-finite), the subnormals included
      std::uint16_t bits = static_cast<std::uint16_t>(r >> 7);
      const std::uint16_t all_ones = type == attn::StoredType::F16 ? 0x7c00 : 0x7f80;
      if ((bits & all_ones) == all_ones) bits = static_cast<std::uint16_t>(bits & ~0x4000);
      if (type == attn::StoredType::BF16) bits = static_cast<std::uint16_t>(bits & 0xbfff);  // |x| < 2
      std::memcpy(at, &bits, 2);
      value = type == attn::StoredType::F16 ? attn::half_to_double(bits) : attn::bfloat16_to_double(bits);
    }
    s.widened.push_back(value);
  }
  return s;
}

}  // namespace

TEST_CASE("a stored operand gives every kernel's bits of the widened one", "[kernels][product_kernels]") {
  struct Case {
    std::size_t M, K, P;
    bool transposed;
  };
  // Rows fewer than a tile (b read in place) and more (b packed), K and P leaving tails;
  // 1024 numbers a stored row, a multiple of 2 KiB: one row of a reads two groups at once.
  // Transposed, 1 to 11 rows: up to eight in one pass (the AVX-512 kernel's), columns in
  // eights and sixteens with a few left, k in steps of 32 with some left in a block.
  const Case cases[] = {{1, 300, 70, false}, {3, 600, 37, false}, {1, 300, 70, true},   {5, 300, 129, true},
                        {40, 61, 45, false}, {40, 61, 45, true},  {13, 513, 19, false}, {1, 259, 33, true},
                        {2, 7, 20, true},    {13, 259, 35, true}, {3, 600, 37, true},   {4, 513, 50, false},
                        {4, 513, 50, true},  {1, 1024, 37, true}, {7, 300, 70, true},   {11, 290, 49, true},
                        {8, 64, 16, true},   {6, 33, 23, true}};
  for (const attn::ProductKernel kernel : attn::kProductKernels) {
    if (!attn::cpu_runs(kernel)) continue;
    for (const attn::StoredType type : attn_test::kStoredTypes)
      for (const Case& c : cases) {
        INFO(attn::name_of(kernel) << " type " << static_cast<int>(type) << " " << c.M << "x" << c.K << "x" << c.P
                                   << (c.transposed ? " transposed" : ""));
        std::vector<double> a(c.M * c.K);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.001 * static_cast<double>((i * 7919) % 1999) - 1.0;
        const Stored b = numbers(type, c.K * c.P);
        const std::size_t stride = c.transposed ? c.K : c.P;
        std::vector<double> widened(c.M * c.P, -1.0), stored(c.M * c.P, -2.0);
        const attn::MatrixOperand A{a.data(), c.K, false};
        attn::large_matrix_product_by(kernel, A, attn::MatrixOperand{b.widened.data(), stride, c.transposed},
                                      widened.data(), c.P, c.M, c.K, c.P);
        attn::StoredMatrix m;
        m.bytes = b.bytes.data() + 1;
        m.type = type;
        m.stride = stride;
        m.transposed = c.transposed;
        attn::large_matrix_product_by(kernel, A, attn::stored_operand(m, 0), stored.data(), c.P, c.M, c.K, c.P);
        CHECK(same_bits(stored, widened));
      }
  }
}

TEST_CASE("matmul on a stored weight: the bits of matmul on the widened weight, threaded or not",
          "[kernels][projection]") {
  // (2, 300, 700): two blocks of columns on two threads; (2, 3, 4): the reference loop.
  attn_test::for_each_stored_product(
      {{2, 300, 700}, {7, 256, 520}, {2, 3, 4}},
      [](attn::StoredType type, std::size_t M, std::size_t K, std::size_t P, bool transposed) {
        std::vector<double> a(M * K);
        for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37 * static_cast<double>(i));
        const Stored b = numbers(type, K * P);
        // the widened (K,P) matrix as matmul reads it
        std::vector<double> w(K * P);
        for (std::size_t k = 0; k < K; ++k)
          for (std::size_t j = 0; j < P; ++j) w[k * P + j] = transposed ? b.widened[j * K + k] : b.widened[k * P + j];
        attn::StoredMatrix m;
        m.bytes = b.bytes.data() + 1;
        m.type = type;
        m.stride = transposed ? K : P;
        m.transposed = transposed;
        std::vector<double> expected(M * P), actual(M * P);
        attn::matmul(a.data(), w.data(), expected.data(), M, K, P);
        if (M * K * P >= 32768) attn::matmul_fast(a.data(), w.data(), expected.data(), M, K, P);
        attn::matmul(a.data(), m, actual.data(), M, K, P);
        CHECK(same_bits(actual, expected));
        // widened whole, the same numbers
        attn::Tensor t({K, P});
        t.stored = std::make_shared<attn::StoredMatrix>(m);
        t.data.clear();
        CHECK(t.size() == K * P);
        const attn::Tensor whole = attn::widened(t);
        CHECK(same_bits(attn::to_vector(whole.data), w));
      });
}
