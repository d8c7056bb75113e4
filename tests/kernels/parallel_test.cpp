#include "kernels/parallel.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

namespace {
// The ranges for_each_range hands out for n, sorted.
std::vector<std::pair<std::size_t, std::size_t>> ranges_of(std::size_t n) {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::mutex m;
  attn::for_each_range(n, [&](std::size_t begin, std::size_t end) {
    const std::lock_guard<std::mutex> lock(m);
    ranges.emplace_back(begin, end);
  });
  std::sort(ranges.begin(), ranges.end());
  return ranges;
}
}  // namespace

TEST_CASE("for_each_range covers every index once, in one call below the threads' limit", "[kernels][parallel]") {
  CHECK(ranges_of(0) == std::vector<std::pair<std::size_t, std::size_t>>{{0, 0}});
  CHECK(ranges_of(1000) == std::vector<std::pair<std::size_t, std::size_t>>{{0, 1000}});
  const std::size_t below = attn::kParallelMinElements - 1;
  CHECK(ranges_of(below) == std::vector<std::pair<std::size_t, std::size_t>>{{0, below}});
  // above it: contiguous ranges, one per thread, from 0 to n with no gap or overlap
  const std::size_t n = attn::kParallelMinElements + 7;
  const auto ranges = ranges_of(n);
  REQUIRE(!ranges.empty());
  CHECK(ranges.front().first == 0);
  CHECK(ranges.back().second == n);
  for (std::size_t i = 1; i < ranges.size(); ++i) CHECK(ranges[i].first == ranges[i - 1].second);
}
