#include <algorithm>

#include <catch2/catch.hpp>

#include "attn/forward.h"
#include "attn/model_file.h"
#include "core/top_k.h"
#include "model/default_model.h"
#include "model/token_input.h"

namespace {
attn::Model default_model_reading(const std::string& text) {
  attn::Model model = attn::load_model_text(attn::default_model_json(), attn::kDefaultModelSource);
  attn::replace_source_text(model, text, "text");
  return model;
}
}  // namespace

TEST_CASE("with no target the decoder reads <BOS>, then the model's own greedy picks", "[generate]") {
  attn::Model model = default_model_reading("I love AI");
  REQUIRE(model.target_tokens.from_bos);
  // "I love AI" has 3 tokens: the target grows to 3, <BOS> and 2 picks.
  CHECK(attn::generated_length(model) == 2);
  CHECK(attn::extend_target_greedily(model, attn::generated_length(model)) == 2);
  const auto target = attn::token_lists(model.target_tokens);
  REQUIRE(target.size() == 1);
  CHECK(target[0] == std::vector<std::string>{"<BOS>", "should", "more"});
  // Each pick is the most probable token after the one before, <PAD>, <UNK> and <BOS> left out:
  // the run on the whole target predicts "should" after <BOS> and "more" after "should".
  attn::Trace trace;
  trace.keep_entries(false);
  const attn::Tensor p = attn::run_model(model, trace);  // (B=1, T=3, V)
  const std::size_t V = p.shape[2];
  const auto never = model.vocab.never_written_ids();
  for (std::size_t t = 0; t < 2; ++t) {
    const auto top = attn::top_tokens(p.data.data() + t * V, V, 1, never);
    CHECK(model.vocab.token(top[0].id) == target[0][t + 1]);
  }
}

TEST_CASE("a given target is not extended, and a one-word source still gets a two-token target", "[generate]") {
  attn::Model given = default_model_reading("I love AI");
  attn::replace_target_text(given, "<BOS> J' aime", "--target");
  CHECK(attn::extend_target_greedily(given, 5) == 0);
  attn::Model one_word = default_model_reading("Hello");
  CHECK(attn::generated_length(one_word) == 1);  // at least two tokens: <BOS> and one pick
  CHECK(attn::extend_target_greedily(one_word, attn::generated_length(one_word)) == 1);
  CHECK(attn::token_lists(one_word.target_tokens)[0].size() == 2);
}
