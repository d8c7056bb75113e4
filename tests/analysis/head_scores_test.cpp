#include "analysis/head_scores.h"

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "model/json_reader.h"

using attn::HeadScore;
using attn::Tensor;

namespace {

Tensor weights(const std::vector<std::vector<double>>& rows) {
  Tensor w({rows.size(), rows.size()}, {"S", "S"});
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = 0; j < rows.size(); ++j) w.data[i * rows.size() + j] = rows[i][j];
  return w;
}

// "A B A B" read by a causal head; halves and quarters, so every mean below is exact.
const Tensor kHandWorked = weights({{1, 0, 0, 0}, {0.5, 0.5, 0, 0}, {0.25, 0.5, 0.25, 0}, {0.125, 0.5, 0.25, 0.125}});
const std::vector<std::size_t> kABAB = {0, 1, 0, 1};

}  // namespace

TEST_CASE("head scores of hand-worked weights", "[analysis]") {
  // previous token: w[1,0], w[2,1], w[3,2] = 0.5, 0.5, 0.25
  CHECK(*attn::previous_token_score(kHandWorked) == 1.25 / 3);
  // first token: w[1,0], w[2,0], w[3,0] = 0.5, 0.25, 0.125; self: the diagonal from p = 1, the same
  CHECK(*attn::first_token_score(kHandWorked) == 0.875 / 3);
  CHECK(*attn::self_score(kHandWorked) == 0.875 / 3);
  // repeats: p = 2 (A, earlier at q = 0) and p = 3 (B, earlier at q = 1)
  CHECK(*attn::induction_score(kHandWorked, kABAB) == 0.375);                    // w[2,1] = 0.5, w[3,2] = 0.25
  CHECK(*attn::induction_score(kHandWorked, kABAB, 2) == 0.1875);                // w[2,2] = 0.25, w[3,3] = 0.125
  CHECK(*attn::duplicate_token_score(kHandWorked, kABAB) == 0.375);              // w[2,0] = 0.25, w[3,1] = 0.5
  CHECK(attn::strongest_role(attn::score_head(kHandWorked, kABAB)) == "mixed");  // none reaches 0.5
}

TEST_CASE("head scores: the latest earlier occurrence, and positions that do not qualify", "[analysis]") {
  // "A A A": p = 1 copies from q = 0 (w[1,1]); p = 2's latest earlier A is q = 1 (w[2,2])
  const Tensor w = weights({{1, 0, 0}, {0.25, 0.75, 0}, {0.5, 0.25, 0.25}});
  const std::vector<std::size_t> aaa = {3, 3, 3};
  CHECK(*attn::induction_score(w, aaa) == 0.5);                  // (0.75 + 0.25) / 2
  CHECK_FALSE(attn::induction_score(w, aaa, 2).has_value());     // q + 2 = p + 1 at both: no position
  CHECK(*attn::duplicate_token_score(w, aaa) == 0.5);            // 0.25 at p = 1; 0.5 + 0.25 at p = 2
  CHECK_FALSE(attn::induction_score(w, {1, 2, 3}).has_value());  // no token repeats
  CHECK_FALSE(attn::previous_token_score(weights({{1}})).has_value());
}

TEST_CASE("the strongest role is the largest score of at least 0.5", "[analysis]") {
  // an induction head on "A B C A B": p = 3 (A, q = 0) looks at 1, p = 4 (B, q = 1) mostly at 2;
  // the segment is longer than 2, so the induction position is not the previous token's
  const Tensor w = weights({{1, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {0, 1, 0, 0, 0}, {0, 0, 0.75, 0, 0.25}});
  const attn::HeadScores s = attn::score_head(w, {0, 1, 2, 0, 1});
  CHECK(*s.induction == 0.875);      // (1 + 0.75) / 2
  CHECK(*s.previous_token == 0.25);  // w[1,0] = 1, then 0, 0, 0
  CHECK(*s.first_token == 0.5);      // 1, 1, 0, 0
  CHECK(*s.self == 0.0625);          // 0, 0, 0, 0.25
  CHECK(attn::strongest_role(s) == "induction");
}

TEST_CASE("head scores refuse weights that are not one head's square matrix", "[analysis]") {
  CHECK_THROWS_AS(attn::previous_token_score(Tensor({2, 3})), attn::InternalError);
  CHECK_THROWS_AS(attn::induction_score(kHandWorked, {0, 1}), attn::InternalError);
}

TEST_CASE("head scores equal NumPy's recomputation from the definitions", "[analysis]") {
  const attn::Json doc = attn::parse_json(
      attn::read_text_file(ATTN_SOURCE_DIR "/tests/reference/head_score_cases.json"), "head_score_cases.json");
  REQUIRE(doc["cases"].size() == 4);
  for (const attn::Json& c : doc["cases"]) {
    const auto tokens = c["tokens"].get<std::vector<std::size_t>>();
    const Tensor w = weights(c["weights"].get<std::vector<std::vector<double>>>());
    const attn::HeadScores scores = attn::score_head(w, tokens);
    for (const std::string& name : attn::head_score_names()) {
      INFO("tokens " << c["tokens"].dump() << ", " << name);
      const attn::Json& expected = c["scores"].at(name);
      const HeadScore got = attn::score_named(scores, name);
      REQUIRE(got.has_value() == !expected.is_null());
      if (got) CHECK(*got == expected.get<double>());  // the same pairwise mean as np.mean: the same bits
    }
  }
}
