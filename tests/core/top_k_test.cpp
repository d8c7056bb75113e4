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
