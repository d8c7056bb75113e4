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

TEST_CASE("head scores of a bidirectional head: the next token and the last ([SEP])", "[analysis]") {
  // "[CLS] x [SEP]" read without a mask: quarters and halves, so the means are exact
  const Tensor w = weights({{0.25, 0.5, 0.25}, {0, 0.25, 0.75}, {0.5, 0.25, 0.25}});
  CHECK(*attn::next_token_score(w) == 0.625);  // w[0,1] = 0.5, w[1,2] = 0.75
  CHECK(*attn::last_token_score(w) == 0.5);    // w[0,2] = 0.25, w[1,2] = 0.75
  const attn::HeadScores s = attn::score_head(w, {2, 7, 3});
  CHECK(attn::strongest_role(s, true) == "next_token");
  CHECK(attn::strongest_role(s) == "mixed");  // a causal model's roles leave them out
  CHECK(attn::head_score_names().size() == 6);
  CHECK(attn::head_score_names(true).back() == "last_token");
  CHECK(*attn::score_named(s, "last_token") == 0.5);
  CHECK_FALSE(attn::next_token_score(weights({{1}})).has_value());  // one token: nothing ahead
  // under a causal mask nothing lies ahead: 0
  CHECK(*attn::next_token_score(kHandWorked) == 0);
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

TEST_CASE("copy targets: the positions whose token occurred before, and the token that followed it", "[analysis]") {
  // <BOS> A B C A B C (ids 9 0 1 2 0 1 2): p = 4 (A, last at 1) copies B, p = 5 (B, last at 2)
  // copies C; p = 6 (C) has no next position in the sequence, so it is no target.
  const auto targets = attn::copy_targets({9, 0, 1, 2, 0, 1, 2});
  REQUIRE(targets.size() == 2);
  CHECK(targets[0].position == 4);
  CHECK(targets[0].token == 1);
  CHECK(targets[1].position == 5);
  CHECK(targets[1].token == 2);
  // "A A B A": p = 1 (A, last at 0) copies tokens[1] = A; p = 3 has no next position.
  const auto again = attn::copy_targets({0, 0, 1, 0});
  REQUIRE(again.size() == 1);
  CHECK(again[0].position == 1);
  CHECK(again[0].token == 0);
  CHECK(attn::copy_targets({0, 1, 2}).empty());
}

TEST_CASE("copy scores: right greedy picks, never-written tokens left out, and the mean probability", "[analysis]") {
  // (S=3,V=3) rows; targets: position 1 wants token 2, position 2 wants token 1.
  Tensor p({3, 3}, {"S", "V"});
  p.data = {1, 0, 0, /* row 1 */ 0.5, 0.125, 0.375, /* row 2 */ 0.25, 0.5, 0.25};
  const std::vector<attn::CopyTarget> targets = {{1, 2}, {2, 1}};
  // With token 0 never written, row 1's pick is 2 (0.375 > 0.125), row 2's is 1: both right.
  const attn::CopyScore kept = attn::score_copies(p, targets, {0});
  CHECK(kept.right == 2);
  CHECK(kept.positions == 2);
  CHECK(kept.mean_p == (0.375 + 0.5) / 2);
  // Every token writable: row 1 picks 0 (0.5), wrong; row 2 still 1.
  const attn::CopyScore all = attn::score_copies(p, targets, {});
  CHECK(all.right == 1);
  CHECK(all.mean_p == 0.4375);
  CHECK(attn::score_copies(p, {}, {}).positions == 0);
}
