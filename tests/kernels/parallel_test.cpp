#include "kernels/parallel.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include <omp.h>
#include <catch2/catch.hpp>

namespace {
// The ranges for_each_range hands out for n, sorted.
std::vector<std::pair<std::size_t, std::size_t>> ranges_of(std::size_t n,
                                                           std::size_t min_elements = attn::kParallelMinElements) {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::mutex m;
  attn::for_each_range(
      n,
      [&](std::size_t begin, std::size_t end) {
        const std::lock_guard<std::mutex> lock(m);
        ranges.emplace_back(begin, end);
      },
      min_elements);
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

TEST_CASE("for_each_range splits from the limit it is given", "[kernels][parallel]") {
  const std::size_t limit = attn::kParallelMinFormulaElements;
  CHECK(ranges_of(limit - 1, limit) == std::vector<std::pair<std::size_t, std::size_t>>{{0, limit - 1}});
  // GPT-2's 3072 hidden numbers of one row: one range per thread, 0 to 3072, no gap or overlap
  const auto ranges = ranges_of(3072, limit);
  REQUIRE(ranges.size() == static_cast<std::size_t>(omp_get_max_threads()));
  CHECK(ranges.front().first == 0);
  CHECK(ranges.back().second == 3072);
  for (std::size_t i = 1; i < ranges.size(); ++i) CHECK(ranges[i].first == ranges[i - 1].second);
}
