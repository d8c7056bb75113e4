#include "kernels/matmul.h"

#include <cmath>
#include <cstring>
#include <vector>

#include <omp.h>

#include <catch2/catch.hpp>

#include "same_bits.h"

#include "attn/product_kernel.h"
#include "kernels/matrix_kernel.h"

namespace {

using attn_test::same_bits;

std::vector<double> wave(std::size_t n, double step, double phase) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = std::sin(step * static_cast<double>(i) + phase);
  return v;
}

// `values` copied to `offset` doubles into a buffer with room to spare.
std::vector<double> placed(const std::vector<double>& values, std::size_t offset) {
  std::vector<double> buffer(values.size() + 16, 0.0);
  std::copy(values.begin(), values.end(), buffer.begin() + static_cast<std::ptrdiff_t>(offset));
  return buffer;
}

// matmul_fast of a (M,K) and b (K,P) placed at the given offsets, result read back.
std::vector<double> product_at(const std::vector<double>& a, const std::vector<double>& b, std::size_t M, std::size_t K,
                               std::size_t P, std::size_t a_off, std::size_t b_off, std::size_t c_off) {
  const std::vector<double> A = placed(a, a_off), B = placed(b, b_off);
  std::vector<double> C(M * P + 16, 0.0);
  attn::matmul_fast(A.data() + a_off, B.data() + b_off, C.data() + c_off, M, K, P);
  return {C.begin() + static_cast<std::ptrdiff_t>(c_off), C.begin() + static_cast<std::ptrdiff_t>(c_off + M * P)};
}

}  // namespace

TEST_CASE("fast products give the same bits wherever the matrices sit in memory", "[kernels][matmul]") {
  // A row times a matrix and a matrix times a column (Eigen's matrix-vector kernels), odd
  // sizes, and one above a million multiply-adds (split into two column blocks).
  const std::size_t shapes[][3] = {{1, 300, 200}, {200, 300, 1}, {37, 61, 45}, {192, 80, 72}, {300, 64, 64}};
  for (const auto& shape : shapes) {
    const std::size_t M = shape[0], K = shape[1], P = shape[2];
    CAPTURE(M, K, P);
    const std::vector<double> a = wave(M * K, 0.37, 0.0), b = wave(K * P, 0.11, 1.0);
    const std::vector<double> first = product_at(a, b, M, K, P, 0, 0, 0);
    // and agrees with the plain sum
    double worst = 0;
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < P; ++j) {
        double sum = 0;
        for (std::size_t k = 0; k < K; ++k) sum += a[i * K + k] * b[k * P + j];
        worst = std::max(worst, std::abs(first[i * P + j] - sum));
      }
    CHECK(worst < 1e-12);
    for (std::size_t offset = 1; offset < 8; ++offset) {
      CAPTURE(offset);
      CHECK(same_bits(product_at(a, b, M, K, P, offset, (offset + 3) % 8, (offset + 5) % 8), first));
    }
  }
}

TEST_CASE("a batched product is each item's product, whichever thread computes it", "[kernels][matmul]") {
  // 8 heads of (64,64) @ (64,512): 2.1M multiply-adds in all, shared between the threads;
  // each must equal the same product computed alone on this thread.
  const std::size_t batches = 8, M = 64, K = 64, P = 512;
  const std::vector<double> a = wave(batches * M * K, 0.29, 0.5), b = wave(batches * K * P, 0.07, 2.0);
  for (std::size_t offset = 0; offset < 4; ++offset) {
    const std::vector<double> A = placed(a, offset), B = placed(b, offset + 1);
    std::vector<double> C(batches * M * P + 16);
    attn::batched_matmul_fast(A.data() + offset, B.data() + offset + 1, C.data() + offset, batches, M, K, P);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < batches; ++i) {
      std::vector<double> alone(M * P);
      attn::large_matrix_product(a.data() + i * M * K, K, b.data() + i * K * P, P, alone.data(), P, M, K, P);
      differ += std::memcmp(alone.data(), C.data() + offset + i * M * P, M * P * sizeof(double)) == 0 ? 0 : 1;
    }
    CAPTURE(offset);
    CHECK(differ == 0);
  }
}

TEST_CASE("a product is cut into pieces set by its sizes, not by the threads", "[kernels][matmul][threads]") {
  // Below a million multiply-adds or 16 columns: one piece. Above, from 8 rows: one per 256
  // columns, 2 to 16.
  CHECK(attn::product_pieces(64, 64, 64) == 1);
  CHECK(attn::product_pieces(100000, 100, 8) == 1);
  CHECK(attn::product_pieces(300, 64, 64) == 2);
  CHECK(attn::product_pieces(512, 512, 512) == 2);
  CHECK(attn::product_pieces(512, 512, 2048) == 8);
  CHECK(attn::product_pieces(16, 64, 50000) == 16);
  // Fewer than 8 rows (a generated token's, a short prompt's): one per 2048 columns, made
  // even, 2 to 16: GPT-2's projections in 2 (2304, 3072 and 768 columns), Llama-1B's
  // feed-forward in 4 (8192), its tied head in 16 (128256).
  CHECK(attn::product_pieces(1, 768, 2304) == 2);
  CHECK(attn::product_pieces(1, 768, 3072) == 2);
  CHECK(attn::product_pieces(1, 3072, 768) == 2);
  CHECK(attn::product_pieces(7, 2048, 8192) == 4);
  CHECK(attn::product_pieces(1, 2048, 6144) == 4);
  CHECK(attn::product_pieces(1, 2048, 128256) == 16);
  CHECK(attn::product_pieces(1, 64, 64) == 1);
  // The same bits on 5, 3, 2 and 1 threads (4 pieces of 256 columns here, 5 of 280). The
  // largest team first: LLVM's libomp 14 (the sanitizer build's) leaks the threads it adds
  // when a team of two or more grows, which LeakSanitizer would report.
  for (const std::size_t P : {1024, 1400}) {
    const std::size_t M = 40, K = 48;
    CAPTURE(P, attn::product_pieces(M, K, P));
    const std::vector<double> a = wave(M * K, 0.31, 0.2), b = wave(K * P, 0.13, 0.9);
    const int threads_before = omp_get_max_threads();
    std::vector<std::vector<double>> results;
    for (const int threads : {5, 3, 2, 1}) {
      omp_set_num_threads(threads);
      results.push_back(product_at(a, b, M, K, P, 0, 0, 0));
    }
    omp_set_num_threads(threads_before);
    for (std::size_t i = 1; i < results.size(); ++i) CHECK(same_bits(results[i], results[0]));
  }
}

TEST_CASE("the backward's transposed products give the same bits wherever the matrices sit", "[kernels][matmul]") {
  // aᵀ @ b and a @ bᵀ, below and above a million multiply-adds (one thread, two blocks).
  const std::size_t shapes[][3] = {{37, 61, 45}, {128, 96, 100}};
  for (const auto& shape : shapes)
    for (const attn::Transposes t : {attn::Transposes{true, false}, attn::Transposes{false, true}}) {
      const std::size_t M = shape[0], K = shape[1], P = shape[2];
      CAPTURE(M, K, P, t.a);
      const std::vector<double> a = wave(M * K, 0.23, 0.3), b = wave(K * P, 0.19, 1.3);
      const auto at = [&](std::size_t a_off, std::size_t b_off, std::size_t c_off) {
        const std::vector<double> A = placed(a, a_off), B = placed(b, b_off);
        std::vector<double> C(M * P + 16, 0.0);
        attn::matmul_transposed_fast(A.data() + a_off, B.data() + b_off, t, C.data() + c_off, M, K, P);
        return std::vector<double>(C.begin() + static_cast<std::ptrdiff_t>(c_off),
                                   C.begin() + static_cast<std::ptrdiff_t>(c_off + M * P));
      };
      const std::vector<double> first = at(0, 0, 0);
      double worst = 0;
      for (std::size_t i = 0; i < M; ++i)
        for (std::size_t j = 0; j < P; ++j) {
          double sum = 0;
          for (std::size_t k = 0; k < K; ++k)
            sum += (t.a ? a[k * M + i] : a[i * K + k]) * (t.b ? b[j * K + k] : b[k * P + j]);
          worst = std::max(worst, std::abs(first[i * P + j] - sum));
        }
      CHECK(worst < 1e-12);
      for (std::size_t offset = 1; offset < 8; ++offset) {
        CAPTURE(offset);
        CHECK(same_bits(at(offset, (offset + 3) % 8, (offset + 5) % 8), first));
      }
    }
}

TEST_CASE("the large products add their time and 2 M K P operations to the totals", "[matmul]") {
  const std::size_t M = 40, K = 30, P = 20, batches = 3;
  const std::vector<double> a = wave(batches * M * K, 0.3, 0.1), b = wave(batches * K * P, 0.7, 0.2);
  std::vector<double> c(batches * M * P);
  const attn::ProductTotals before = attn::product_totals();
  attn::matmul_fast(a.data(), b.data(), c.data(), M, K, P);
  attn::batched_matmul_fast(a.data(), b.data(), c.data(), batches, M, K, P);
  attn::matmul_transposed_fast(a.data(), b.data(), attn::Transposes{true, false}, c.data(), M, K, P);
  attn::batched_matmul_transposed_fast(a.data(), b.data(), attn::Transposes{false, true}, c.data(), batches, M, K, P);
  // a checkpoint's weight as stored (F64 here: b's own bytes), (K,P)
  attn::StoredMatrix stored;
  stored.bytes = reinterpret_cast<const unsigned char*>(b.data());
  stored.type = attn::StoredType::F64;
  stored.stride = P;
  attn::matmul_stored_fast(a.data(), stored, c.data(), M, K, P);
  const attn::ProductTotals after = attn::product_totals();
  // 2 * 40 * 30 * 20 = 48000 operations per product, 9 products
  CHECK(after.flops - before.flops == 9 * 48000.0);
  CHECK(after.seconds > before.seconds);
}
