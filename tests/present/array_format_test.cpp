#include "present/array_format.h"

#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "model/json_reader.h"

// tests/reference/numpy_format_cases.json holds arrays and the exact text NumPy 1.24's
// array2string printed for them (made by make_numpy_format_cases.py beside it).
TEST_CASE("format_array prints exactly what NumPy prints", "[format]") {
  const attn::Json cases =
      attn::parse_json(attn::read_text_file(std::string(ATTN_SOURCE_DIR) + "/tests/reference/numpy_format_cases.json"),
                       "numpy_format_cases.json");
  REQUIRE(cases.size() >= 15);
  for (const auto& c : cases) {
    attn::Tensor t(c["shape"].get<attn::Shape>());
    for (std::size_t i = 0; i < t.size(); ++i) {
      const auto& v = c["data"][i];
      if (v.is_string()) {
        const std::string s = v.get<std::string>();
        t.data[i] = s == "nan" ? std::nan("") : (s == "-inf" ? -INFINITY : INFINITY);
      } else {
        t.data[i] = v.get<double>();
      }
    }
    attn::ArrayFormatOptions options;
    options.precision = c["precision"].get<int>();
    options.suppress_small = c["suppress"].get<bool>();
    options.line_width = c["linewidth"].get<std::size_t>();
    INFO(c["expr"].get<std::string>());
    CHECK(attn::format_array(t, options) == c["text"].get<std::string>());
  }
}

TEST_CASE("integers print right-aligned without a point", "[format]") {
  attn::Tensor ids({2, 3});
  ids.data = {2, 3, 4, 10, 0, 1};
  attn::ArrayFormatOptions options;
  options.integers = true;
  CHECK(attn::format_array(ids, options) == "[[ 2  3  4]\n [10  0  1]]");
}

TEST_CASE("a prefix before the bracket indents continuation lines", "[format]") {
  attn::Tensor t({2, 2});
  t.data = {1, 2, 3, 4};
  CHECK(attn::format_array(t, {}, 4) == "[[1. 2.]\n     [3. 4.]]");
}

TEST_CASE("format_number rounds like NumPy", "[format]") {
  CHECK(attn::format_number(1.096) == "1.096");
  CHECK(attn::format_number(std::sqrt(2.0)) == "1.4142");
  CHECK(attn::format_number(2.0) == "2.");
}
