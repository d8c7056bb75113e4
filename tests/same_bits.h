// Whether two runs gave the same numbers to the bit (the kernels' tests: a product, a
// softmax or an activation computed two ways, or twice).
#ifndef ATTN_TESTS_SAME_BITS_H_
#define ATTN_TESTS_SAME_BITS_H_

#include <cstring>
#include <vector>

namespace attn_test {

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace attn_test

#endif  // ATTN_TESTS_SAME_BITS_H_
