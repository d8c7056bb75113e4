// The cases the stored-weight product tests run: every stored type, each size, both layouts
// (x·W, and x·Wᵀ from a matrix stored transposed), each named in a failure's output.
#ifndef ATTN_TESTS_KERNELS_STORED_CASES_H_
#define ATTN_TESTS_KERNELS_STORED_CASES_H_

#include <cstddef>
#include <initializer_list>

#include <catch2/catch.hpp>

#include "attn/tensor.h"

namespace attn_test {

constexpr attn::StoredType kStoredTypes[] = {attn::StoredType::F64, attn::StoredType::F32, attn::StoredType::F16,
                                             attn::StoredType::BF16};

// A product's sizes: a (M,K) @ b (K,P).
struct ProductSize {
  std::size_t M, K, P;
};

// body(type, M, K, P, transposed) for every stored type, size and layout.
template <class Body>
void for_each_stored_product(std::initializer_list<ProductSize> sizes, Body body) {
  for (const attn::StoredType type : kStoredTypes)
    for (const ProductSize& s : sizes)
      for (const bool transposed : {false, true}) {
        INFO("type " << static_cast<int>(type) << " " << s.M << "x" << s.K << "x" << s.P
                     << (transposed ? " transposed" : ""));
        body(type, s.M, s.K, s.P, transposed);
      }
}

}  // namespace attn_test

#endif  // ATTN_TESTS_KERNELS_STORED_CASES_H_
