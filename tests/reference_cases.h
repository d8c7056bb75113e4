// Shared by the tests that compare attn with committed PyTorch reference values
// (tests/reference/torch_*/): the case list, non-finite values, and the scaled error.
#ifndef ATTN_TESTS_REFERENCE_CASES_H_
#define ATTN_TESTS_REFERENCE_CASES_H_

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/model_file.h"
#include "model/json_reader.h"

namespace attn_test {

// A gradient case of <dir>: what PyTorch computed (<name>.expected.json) and the model file
// it was computed from (<name>.json), loaded for the backward pass.
struct BackwardCase {
  attn::Json expected;
  attn::LoadedModel run;
};
inline BackwardCase load_backward_case(const std::string& dir, const std::string& name) {
  BackwardCase c;
  c.expected = attn::parse_json(attn::read_text_file(dir + name + ".expected.json"), name + ".expected.json");
  attn::LoadOptions options;
  options.backward = true;
  c.run = attn::load_model_file(dir + name + ".json", options);
  return c;
}

// |attn - torch| <= 1e-12 * max(1, |torch|): absolute near zero, relative for large values.
constexpr double kTolerance = 1e-12;

// The names listed in <dir>/cases.txt, one per line.
inline std::vector<std::string> case_names(const std::string& dir) {
  std::ifstream in(dir + "cases.txt");
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) names.push_back(line);
  return names;
}

// A JSON number, or one of the strings the generators write for non-finite values.
inline double expected_value(const attn::Json& v) {
  if (v.is_number()) return v.get<double>();
  const std::string s = v.get<std::string>();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  FAIL("unexpected string in an expected file: " << s);
  return 0;
}

// The error scaled as the tolerance is: 0 when both are the same infinity (or both NaN),
// infinite when only one is non-finite, so -inf must stay -inf and not become a large negative.
inline double scaled_error(double actual, double expected) {
  if (std::isnan(expected) || std::isnan(actual))
    return std::isnan(expected) && std::isnan(actual) ? 0.0 : std::numeric_limits<double>::infinity();
  if (std::isinf(expected) || std::isinf(actual))
    return actual == expected ? 0.0 : std::numeric_limits<double>::infinity();
  return std::fabs(actual - expected) / std::max(1.0, std::fabs(expected));
}

}  // namespace attn_test

#endif  // ATTN_TESTS_REFERENCE_CASES_H_
