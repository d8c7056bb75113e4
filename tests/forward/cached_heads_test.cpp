// CachedHeads (attn/generate.h), the KV cache's keys and values: the numbers a step reads
// back are the ones written, in the layout asked, past the room it grows by, from any
// position a sliding window starts at. Each number is its own address, g·10000 + s·10 + j,
// so a number read from the wrong place cannot pass.
#include <catch2/catch.hpp>

#include "attn/generate.h"

namespace {

double number(std::size_t g, std::size_t s, std::size_t j) { return static_cast<double>(g * 10000 + s * 10 + j); }

// (1,G,T,d) of positions [first, first + T)
attn::Tensor positions(std::size_t G, std::size_t first, std::size_t T, std::size_t d) {
  attn::Tensor t({1, G, T, d}, {"B", "G", "T", "d"});
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t s = 0; s < T; ++s)
      for (std::size_t j = 0; j < d; ++j) t.data[(g * T + s) * d + j] = number(g, first + s, j);
  return t;
}

// Every number of heads (1,G,kept,d) and transposed_heads (1,G,d,kept) from position `from`.
void check_reads(const attn::CachedHeads& cache, std::size_t from) {
  const std::size_t G = cache.shape()[0], t = cache.length(), d = cache.shape()[2], kept = t - from;
  const attn::Tensor heads = cache.heads(from), k_t = cache.transposed_heads(from);
  REQUIRE(heads.shape == attn::Shape{1, G, kept, d});
  REQUIRE(k_t.shape == attn::Shape{1, G, d, kept});
  CHECK(heads.axes == attn::AxisNames{"B", "G", "T", "d"});
  CHECK(k_t.axes == attn::AxisNames{"B", "G", "d", "T"});
  std::size_t wrong = 0;
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t s = 0; s < kept; ++s)
      for (std::size_t j = 0; j < d; ++j) {
        wrong += heads.data[(g * kept + s) * d + j] != number(g, from + s, j);
        wrong += k_t.data[(g * d + j) * kept + s] != number(g, from + s, j);
      }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("the cache reads back every position it holds, in both layouts, as it grows", "[generate][kv_cache]") {
  constexpr std::size_t G = 2, d = 3, prompt = 5, steps = 2 * attn::CachedHeads::kRoomStep + 3;
  for (const bool keys : {true, false}) {
    DYNAMIC_SECTION((keys ? "keys" : "values")) {
      attn::CachedHeads cache(keys);
      cache.assign(positions(G, 0, prompt, d));
      CHECK(cache.length() == prompt);
      CHECK(cache.reserved_bytes() == G * 64 * d * sizeof(double));
      check_reads(cache, 0);
      for (std::size_t s = prompt; s < prompt + steps; ++s) {
        cache.append(positions(G, s, 1, d));
        CHECK(cache.length() == s + 1);
      }
      // 138 positions: three steps of room (192)
      CHECK(cache.reserved_bytes() == G * 192 * d * sizeof(double));
      for (std::size_t from : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64}, prompt + steps - 1})
        check_reads(cache, from);
      const attn::Tensor all = cache.as_tensor();
      CHECK(all.shape == attn::Shape{G, prompt + steps, d});
      CHECK(all.axes == attn::AxisNames{"G", "t", "d"});
      CHECK(all.data[(1 * (prompt + steps) + 100) * d + 2] == number(1, 100, 2));
    }
  }
}

TEST_CASE("a cache filled by steps alone, then assigned again, holds the new run only", "[generate][kv_cache]") {
  attn::CachedHeads cache(true);
  CHECK(cache.empty());
  for (std::size_t s = 0; s < 70; ++s) cache.append(positions(1, s, 1, 2));
  check_reads(cache, 0);
  cache.assign(positions(1, 0, 3, 2));
  CHECK(cache.length() == 3);
  CHECK(cache.reserved_bytes() == 64 * 2 * sizeof(double));
  check_reads(cache, 0);
  CHECK_THROWS(cache.append(positions(2, 3, 1, 2)));  // another G
}
