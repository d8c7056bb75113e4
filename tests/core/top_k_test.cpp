#include "core/top_k.h"

#include <catch2/catch.hpp>

TEST_CASE("top_tokens sorts by probability, ties by id", "[top_k]") {
  const double p[] = {0.1, 0.4, 0.1, 0.4};
  const auto top = attn::top_tokens(p, 4, 3);
  REQUIRE(top.size() == 3);
  CHECK(top[0].id == 1);
  CHECK(top[0].probability == 0.4);
  CHECK(top[1].id == 3);
  CHECK(top[2].id == 0);
  CHECK(top[2].probability == 0.1);
  CHECK(attn::top_tokens(p, 4, 10).size() == 4);
}

TEST_CASE("top_tokens can leave out tokens a model never writes", "[top_k]") {
  // ids 0 (<PAD>) and 1 (<UNK>) are the two most probable; leaving them out brings in 3, 2.
  const double p[] = {0.4, 0.3, 0.1, 0.2};
  const auto top = attn::top_tokens(p, 4, 2, {0, 1});
  REQUIRE(top.size() == 2);
  CHECK(top[0].id == 3);
  CHECK(top[1].id == 2);
  CHECK(attn::top_tokens(p, 4, 5, {0}).size() == 3);
}
