#include "io/number_text.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

// Expected texts are Python's repr() of each value (what json.dumps writes), from
// /usr/bin/python3 3.11: listed values plus random bit patterns and gauss(0, 30) draws.
static const std::vector<std::pair<double, const char*>> kPythonRepr = {
    {1.0, "1.0"},
    {-1.0, "-1.0"},
    {0.1, "0.1"},
    {0.0001, "0.0001"},
    {1e-05, "1e-05"},
    {123.25, "123.25"},
    {1e+16, "1e+16"},
    {9999999999999998.0, "9999999999999998.0"},
    {1.5e+16, "1.5e+16"},
    {1e+22, "1e+22"},
    {5e-324, "5e-324"},
    {2.2250738585072014e-308, "2.2250738585072014e-308"},
    {-2.2250738585072014e-308, "-2.2250738585072014e-308"},
    {1.7976931348623157e+308, "1.7976931348623157e+308"},
    {0.3, "0.3"},
    {0.6666666666666666, "0.6666666666666666"},
    {1e+100, "1e+100"},
    {1.5e-07, "1.5e-07"},
    {1200.0, "1200.0"},
    {100.0, "100.0"},
    {1.2345678901234567e+19, "1.2345678901234567e+19"},
    {0.000123, "0.000123"},
    {0.0001, "0.0001"},
    {123456789.125, "123456789.125"},
    {-0.5, "-0.5"},
    {3.141592653589793, "3.141592653589793"},
    {1000000000000000.0, "1000000000000000.0"},
    {1e-100, "1e-100"},
    {10928588.983213553, "10928588.983213553"},
    {1.4186613525849614e+134, "1.4186613525849614e+134"},
    {-7.571968556055867e-74, "-7.571968556055867e-74"},
    {-1.4074705188261364e+113, "-1.4074705188261364e+113"},
    {-3.3339745473042614e-121, "-3.3339745473042614e-121"},
    {-1.2342180766211395e-271, "-1.2342180766211395e-271"},
    {-5.126864004244935e+111, "-5.126864004244935e+111"},
    {-2.1520217579844227e+32, "-2.1520217579844227e+32"},
    {0.1399601630397701, "0.1399601630397701"},
    {1.01853664031722e-244, "1.01853664031722e-244"},
    {2.9704598186234577e-115, "2.9704598186234577e-115"},
    {3.0534183338726823e+150, "3.0534183338726823e+150"},
    {-22.149808538391287, "-22.149808538391287"},
    {4.35973005141078, "4.35973005141078"},
    {-37.716225970957126, "-37.716225970957126"},
    {-10.639853985393309, "-10.639853985393309"},
    {20.897870337406044, "20.897870337406044"},
    {1.7258689218583292, "1.7258689218583292"},
    {-12.308646716661357, "-12.308646716661357"},
    {65.68411193779458, "65.68411193779458"}};

TEST_CASE("write_shortest writes doubles as Python's repr does", "[number_text]") {
  for (const auto& [value, text] : kPythonRepr) {
    INFO(text);
    CHECK(attn::shortest_text(value) == text);
    CHECK(attn::shortest_text_portable(value) == text);
  }
}

TEST_CASE("zeros, NaN and infinities as Python's json writes them", "[number_text]") {
  CHECK(attn::shortest_text(0.0) == "0.0");
  CHECK(attn::shortest_text(-0.0) == "-0.0");
  CHECK(attn::shortest_text(std::numeric_limits<double>::quiet_NaN()) == "NaN");
  CHECK(attn::shortest_text(std::numeric_limits<double>::infinity()) == "Infinity");
  CHECK(attn::shortest_text(-std::numeric_limits<double>::infinity()) == "-Infinity");
}

TEST_CASE("every text reads back as the same double, and the fast route agrees with std::to_chars", "[number_text]") {
  std::mt19937_64 bits(42);
  std::normal_distribution<double> normal(0.0, 30.0);
  std::size_t disagreements = 0, not_round_trip = 0;
  for (int i = 0; i < 200000; ++i) {
    double v;
    if (i % 2) {
      const std::uint64_t b = bits();
      std::memcpy(&v, &b, sizeof v);
      if (v != v || v - v != 0) continue;  // NaN, infinity
    } else {
      v = normal(bits);
    }
    const std::string text = attn::shortest_text(v);
    REQUIRE(text.size() <= static_cast<std::size_t>(attn::kMaxShortestChars));
    if (std::strtod(text.c_str(), nullptr) != v) ++not_round_trip;
    if (text != attn::shortest_text_portable(v)) ++disagreements;
  }
  CHECK(not_round_trip == 0);
  CHECK(disagreements == 0);
}
