#include "steps/embedding.h"

#include <cmath>

#include <catch2/catch.hpp>

using Catch::Matchers::WithinAbs;

namespace {
// Seed 004's embedding table: <PAD>, <UNK>, I, love, AI, you.
attn::Tensor seed004_table() {
  attn::Tensor E({6, 4}, {"V", "N"});
  E.data = {0.00, 0.00, 0.00, 0.00, 0.12, 0.34, 0.56, 0.78, 0.10, 0.20, 0.30, 0.40,
            0.50, 0.10, 0.80, 0.20, 0.90, 0.70, 0.20, 0.10, 0.15, 0.25, 0.35, 0.45};
  return E;
}
}  // namespace

TEST_CASE("embedding lookup is row indexing (seed 004 step 4)", "[embedding]") {
  attn::Tensor ids({1, 3}, {"B", "S"});
  ids.data = {2, 3, 4};  // "I love AI"
  const attn::Tensor x = attn::embedding_lookup(ids, seed004_table());
  REQUIRE(x.shape == attn::Shape{1, 3, 4});
  CHECK(x.data == std::vector<double>{0.10, 0.20, 0.30, 0.40, 0.50, 0.10, 0.80, 0.20, 0.90, 0.70, 0.20, 0.10});
}

TEST_CASE("sinusoidal positions: seed 004's table of 6 positions x 4 dims", "[embedding]") {
  const attn::Tensor pe = attn::sinusoidal_positions(6, 4);
  // The document's table, 2 decimals.
  const double table[6][4] = {{0.00, 1.00, 0.00, 1.00},  {0.84, 0.54, 0.01, 1.00},   {0.91, -0.42, 0.02, 1.00},
                              {0.14, -0.99, 0.03, 1.00}, {-0.76, -0.65, 0.04, 1.00}, {-0.96, 0.28, 0.05, 1.00}};
  for (std::size_t p = 0; p < 6; ++p)
    for (std::size_t i = 0; i < 4; ++i) CHECK(std::round(pe.at({p, i}) * 100) / 100 == table[p][i]);
  // Worked: PE(1,0) = sin(1), PE(1,1) = cos(1), PE(1,2) = sin(1/100), PE(1,3) = cos(1/100)
  CHECK(pe.at({1, 0}) == std::sin(1.0));
  CHECK(pe.at({1, 1}) == std::cos(1.0));
  CHECK(pe.at({1, 2}) == std::sin(0.01));
  CHECK(pe.at({1, 3}) == std::cos(0.01));
  // Odd d_model: the last column is a sine with no cosine partner.
  CHECK(attn::sinusoidal_positions(2, 3).at({1, 2}) == std::sin(1.0 / std::pow(10000.0, 2.0 / 3.0)));
}

TEST_CASE("love + PE(1) = [1.34, 0.64, 0.81, 1.20] (seed 004)", "[embedding]") {
  attn::Tensor ids({1, 3}, {"B", "S"});
  ids.data = {2, 3, 4};
  const attn::Tensor x =
      attn::add_positions(attn::embedding_lookup(ids, seed004_table()), attn::sinusoidal_positions(3, 4));
  const double love[] = {1.34, 0.64, 0.81, 1.20};
  for (std::size_t i = 0; i < 4; ++i) CHECK_THAT(x.at({0, 1, i}), WithinAbs(love[i], 0.005));
  CHECK(x.at({0, 1, 0}) == 0.5 + std::sin(1.0));
  // "I" at position 0 is its embedding plus [0, 1, 0, 1]: [0.1, 1.2, 0.3, 1.4]. Seed 004's
  // step 3 prints [1.34, 0.64, 0.81, 1.20] as the row of "I": that is love's row, a slip.
  CHECK(x.at({0, 0, 1}) == 1.2);
  CHECK(x.at({0, 0, 3}) == 1.4);
}

TEST_CASE("scaling by sqrt(d_model) and learned positions", "[embedding]") {
  attn::Tensor x({1, 1, 4}, {"B", "S", "N"});
  x.data = {1, 2, 3, 4};
  CHECK(attn::scale_embedding(x).data == std::vector<double>{2, 4, 6, 8});
  attn::Tensor table({3, 2}, {"S", "N"});
  table.data = {1, 2, 3, 4, 5, 6};
  CHECK(attn::learned_positions(table, 2).data == std::vector<double>{1, 2, 3, 4});
}
