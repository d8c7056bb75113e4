// The next-token choice against a NumPy re-implementation of its documentation
// (tests/reference/make_sampling_cases.py, docs/generation.md): the same ids, the same
// draws bit for bit, the same distributions to 1e-15.
#include <cmath>

#include <catch2/catch.hpp>

#include "attn/generate.h"
#include "core/numpy_random.h"
#include "model/json_reader.h"

namespace {
double number(const attn::Json& v) { return std::stod(v.get<std::string>()); }
}  // namespace

TEST_CASE("sampling agrees with the documented procedure written in NumPy", "[generate][sampling]") {
  const std::string path = std::string(ATTN_SOURCE_DIR) + "/tests/reference/sampling_cases.json";
  const attn::Json doc = attn::parse_json(attn::read_text_file(path), path);
  REQUIRE(doc.at("cases").size() >= 10);
  for (const auto& c : doc.at("cases")) {
    DYNAMIC_SECTION(c.at("name").get<std::string>()) {
      attn::SamplingOptions options;
      options.temperature = c.at("T").get<double>();
      options.top_k = c.at("K").get<std::size_t>();
      options.top_p = c.at("P").get<double>();
      const std::vector<std::size_t> never = c.at("never").get<std::vector<std::size_t>>();
      attn::NumpyRandom rng(c.at("S").get<std::uint32_t>());
      for (const auto& row : c.at("rows")) {
        std::vector<double> logits;
        for (const auto& v : row.at("logits")) logits.push_back(number(v));
        const attn::SamplingResult r = attn::choose_next_token(logits.data(), logits.size(), options, never, &rng);
        CHECK(r.id == row.at("id").get<std::size_t>());
        if (row.at("draw").is_null()) {
          CHECK_FALSE(r.draw.has_value());
        } else {
          REQUIRE(r.draw.has_value());
          CHECK(*r.draw == number(row.at("draw")));  // the same stream, bit for bit
          CHECK(r.cumulative_before <= *r.draw);
          CHECK(*r.draw < r.cumulative_after);
        }
        const auto& p = row.at("distribution");
        REQUIRE(p.size() == r.distribution.size());
        for (std::size_t i = 0; i < p.size(); ++i) CHECK(std::fabs(r.distribution[i] - number(p[i])) <= 1e-15);
      }
    }
  }
}

TEST_CASE("greedy picks the largest logit, never a token the model never writes", "[generate][sampling]") {
  // logits 3, 1, 5, 5: id 2 and 3 tie at the top; id 2 is never written, so 3.
  const double logits[] = {3, 1, 5, 5};
  const attn::SamplingResult r = attn::choose_next_token(logits, 4, {}, {2}, nullptr);
  CHECK(r.id == 3);
  CHECK_FALSE(r.draw.has_value());
  // softmax over 3, 1, 5 (id 2 removed): e^-2 / (e^-2 + e^-4 + 1) for id 0
  const double total = std::exp(-2.0) + std::exp(-4.0) + 1.0;
  CHECK(r.probabilities[0] == Approx(std::exp(-2.0) / total).epsilon(1e-15));
  CHECK(r.probabilities[2] == 0.0);
  CHECK(r.probabilities[3] == Approx(1.0 / total).epsilon(1e-15));
}
