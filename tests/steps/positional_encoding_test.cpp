#include "steps/positional_encoding.h"

#include <cmath>

#include <catch2/catch.hpp>

#include "gradient_check.h"

using Catch::Matchers::WithinAbs;

TEST_CASE("sinusoidal positions: seed 004's table of 6 positions x 4 dims", "[positional_encoding]") {
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

TEST_CASE("love + PE(1) = [1.34, 0.64, 0.81, 1.20] (seed 004)", "[positional_encoding]") {
  // Seed 004's embeddings of "I love AI" (rows 2, 3, 4 of its table), one sentence of 3.
  attn::Tensor x({1, 3, 4}, {"B", "S", "N"});
  x.data = {0.10, 0.20, 0.30, 0.40, 0.50, 0.10, 0.80, 0.20, 0.90, 0.70, 0.20, 0.10};
  const attn::Tensor with_pe = attn::add_positions(x, attn::sinusoidal_positions(3, 4));
  const double love[] = {1.34, 0.64, 0.81, 1.20};
  for (std::size_t i = 0; i < 4; ++i) CHECK_THAT(with_pe.at({0, 1, i}), WithinAbs(love[i], 0.005));
  CHECK(with_pe.at({0, 1, 0}) == 0.5 + std::sin(1.0));
  // "I" at position 0 is its embedding plus [0, 1, 0, 1]: [0.1, 1.2, 0.3, 1.4]. Seed 004's
  // step 3 prints [1.34, 0.64, 0.81, 1.20] as the row of "I": that is love's row, a slip.
  CHECK(with_pe.at({0, 0, 1}) == 1.2);
  CHECK(with_pe.at({0, 0, 3}) == 1.4);
  // "AI" at position 2 is [1.81, 0.28, 0.22, 1.10]; the document's third row, labelled "AI",
  // is [0.70, 1.70, 0.70, 1.87], another slip.
  const double ai[] = {1.81, 0.28, 0.22, 1.10};
  for (std::size_t i = 0; i < 4; ++i) CHECK(std::round(with_pe.at({0, 2, i}) * 100) / 100 == ai[i]);
}

TEST_CASE("learned positions are the table's first rows, added to every sentence", "[positional_encoding]") {
  attn::Tensor table({3, 2}, {"S", "N"});
  table.data = {1, 2, 3, 4, 5, 6};
  const attn::Tensor pe = attn::learned_positions(table, 2);
  CHECK(pe.shape == attn::Shape{2, 2});
  CHECK(pe.data == std::vector<double>{1, 2, 3, 4});
  // two sentences of 2 positions: the same rows added to both
  attn::Tensor x({2, 2, 2}, {"B", "S", "N"});
  x.data = {10, 10, 10, 10, 20, 20, 20, 20};
  CHECK(attn::add_positions(x, pe).data == std::vector<double>{11, 12, 13, 14, 21, 22, 23, 24});
}

TEST_CASE("positions' backward: the batch's gradients summed, into the first S rows of a table",
          "[positional_encoding][backward]") {
  attn::Tensor dy({2, 2, 1}, {"B", "S", "N"});
  dy.data = {1, 2, 10, 20};
  const attn::Tensor dpe = attn::add_positions_backward(dy);
  CHECK(dpe.shape == attn::Shape{2, 1});
  CHECK(dpe.data == std::vector<double>{11, 22});
  attn::Tensor table({3, 1}, {"S", "N"});
  attn::learned_positions_backward(dpe, table);
  CHECK(table.data == std::vector<double>{11, 22, 0});
}

TEST_CASE("rope_rotate turns pair (i, i + d/2) of position p by p · theta^(-2i/d)", "[positional_encoding][rope]") {
  // One head, 3 positions, d = 4, theta = 100. Position 2: pair 0 turns by 2 · 100^0 = 2,
  // pair 1 by 2 · 100^(-1/2) = 0.2. Row [0.5, -1, 2, 3] becomes
  //   [0.5 cos 2 - 2 sin 2, -1 cos 0.2 - 3 sin 0.2, 2 cos 2 + 0.5 sin 2, 3 cos 0.2 + (-1) sin 0.2].
  attn::Tensor x({1, 1, 3, 4}, {"B", "H", "S", "d"});
  x.data = {1, 2, 3, 4, 5, 6, 7, 8, 0.5, -1, 2, 3};
  const attn::Tensor y = attn::rope_rotate(x, 100.0);
  REQUIRE(y.shape == x.shape);
  for (std::size_t i = 0; i < 4; ++i) CHECK(y.data[i] == x.data[i]);  // position 0: angle 0
  const double expected[] = {-2.0266682719249345, -1.5760745702264254, -0.37764495968144396, 2.7415304027286638};
  for (std::size_t i = 0; i < 4; ++i) CHECK_THAT(y.data[8 + i], WithinAbs(expected[i], 1e-15));
  CHECK(attn::rope_angle(2, 1, 4, 100.0) == 0.2);
}

TEST_CASE("rope_rotate_backward agrees with central differences, and undoes the turn", "[positional_encoding][rope]") {
  const attn::Tensor x = attn_test::wave_tensor({2, 3, 5, 6}, {"B", "H", "S", "d"}, 0.4);
  const attn::Tensor dy = attn_test::wave_tensor({2, 3, 5, 6}, {"B", "H", "S", "d"}, 1.7);
  const attn::Tensor dx = attn::rope_rotate_backward(dy, 10000.0);
  const auto f = [](const attn::Tensor& v) { return attn::rope_rotate(v, 10000.0); };
  CHECK(attn_test::relative_error(dx, attn_test::numeric_gradient(f, x, dy)) < 1e-9);
  // A rotation's transpose is its inverse: turning back gives x again.
  CHECK(attn_test::relative_error(attn::rope_rotate_backward(attn::rope_rotate(x, 10000.0), 10000.0), x) < 1e-15);
}

TEST_CASE("llama3_rope_frequencies: fast pairs kept, slow ones divided by factor, the band between blended",
          "[positional_encoding][rope][llama3]") {
  // d = 16, theta = 10000: f_i = 10000^(-2i/16), wavelengths λ_i = 2π / f_i = 6.28, 19.87,
  // 62.83, 198.7, ... With L = 64, low_freq_factor 1 and high_freq_factor 4 the fast band is
  // λ < 64 / 4 = 16 (pair 0: kept, 1), the slow band λ > 64 / 1 = 64 (pairs 3-7: f / 8), and
  // pairs 1 and 2 are blended. Pair 1 by hand: L / λ = 64 / 19.8692 = 3.22106, s = (3.22106 -
  // 1) / (4 - 1) = 0.740354, (1 - s) · 0.316228 / 8 + s · 0.316228 = 0.010263 + 0.234121 =
  // 0.244385. Pair 2: L / λ = 1.01859, s = 0.006197, 0.993803 · 0.1 / 8 + 0.0006197 = 0.0130423.
  const attn::Tensor inv_freq = attn::rope_inverse_frequencies(16, 10000.0);
  REQUIRE(inv_freq.shape == attn::Shape{8});
  CHECK_THAT(inv_freq.data[1], WithinAbs(0.31622776601683794, 1e-16));
  attn::RopeScaling s;
  s.llama3 = true;
  s.factor = 8;
  s.low_freq_factor = 1;
  s.high_freq_factor = 4;
  s.original_max_position_embeddings = 64;
  const attn::Tensor f = attn::llama3_rope_frequencies(inv_freq, s);
  const double expected[] = {
      1.0,      0.24438459943539834,  0.013042256043820465, 0.003952847075210474, 0.00125, 0.00039528470752104737,
      0.000125, 3.952847075210474e-05};
  for (std::size_t i = 0; i < 8; ++i) CHECK_THAT(f.data[i], WithinAbs(expected[i], 1e-15 * expected[i]));
  CHECK_THAT(f.data[1], WithinAbs(0.244385, 1e-6));  // the hand-worked value above
  // Without the adjustment RoPE turns by the same frequencies, bit for bit, as with theta.
  attn::Tensor x({1, 1, 3, 16}, {"B", "H", "S", "d"});
  for (std::size_t i = 0; i < x.size(); ++i) x.data[i] = std::sin(0.7 * static_cast<double>(i));
  CHECK(attn::rope_rotate(x, inv_freq, 2).data == attn::rope_rotate(x, 10000.0, 2).data);
  CHECK(attn::rope_frequencies(16, 10000.0, attn::RopeScaling{}).data == inv_freq.data);
}

TEST_CASE("partial rotary: the first r numbers turned with an r-wide head's frequencies, the rest passed",
          "[positional_encoding][rope]") {
  // d = 6, r = 4 (frequencies of a 4-wide head, theta 100): position 2 turns pair (0, 2) by 2
  // and pair (1, 3) by 0.2, as rope_rotate turns a 4-wide head; numbers 4 and 5 pass.
  attn::Tensor x({1, 1, 3, 6}, {"B", "H", "S", "d"});
  x.data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0.5, -1, 2, 3, -7, 9};
  const attn::Tensor inv_freq = attn::rope_inverse_frequencies(4, 100.0);
  const attn::Tensor y = attn::rope_rotate(x, inv_freq);
  const double expected[] = {-2.0266682719249345, -1.5760745702264254, -0.37764495968144396, 2.7415304027286638};
  for (std::size_t i = 0; i < 4; ++i) CHECK_THAT(y.data[12 + i], WithinAbs(expected[i], 1e-15));
  CHECK(y.data[16] == -7);
  CHECK(y.data[17] == 9);
  const attn::Tensor dy = attn_test::wave_tensor({1, 1, 3, 6}, {"B", "H", "S", "d"}, 1.7);
  const auto f = [&](const attn::Tensor& v) { return attn::rope_rotate(v, inv_freq); };
  CHECK(attn_test::relative_error(attn::rope_rotate_backward(dy, inv_freq), attn_test::numeric_gradient(f, x, dy)) <
        1e-9);
}
