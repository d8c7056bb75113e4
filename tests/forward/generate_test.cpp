#include <algorithm>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "attn/forward.h"
#include "attn/model_file.h"
#include "core/top_k.h"
#include "model/default_model.h"
#include "model/examples.h"
#include "model/token_input.h"

namespace {
attn::LoadedModel default_model_reading(const std::string& text) {
  attn::LoadedModel model = attn::load_model_text(attn::default_model_json(), attn::kDefaultModelSource);
  attn::replace_source_text(model.model, model.input, text, "text");
  return model;
}
}  // namespace

TEST_CASE("with no target the decoder reads <BOS>, then the model's own greedy picks", "[generate]") {
  attn::LoadedModel model = default_model_reading("I love AI");
  REQUIRE(model.input.target_tokens.from_bos);
  // "I love AI" has 3 tokens: up to 5 picks (a translation may be longer than its source).
  CHECK(attn::generated_length(model.input) == 5);
  // The trained translator writes "J' aime l' IA", then predicts <EOS> after "IA": four picks,
  // the <EOS> not appended (the decoder never reads it).
  CHECK(attn::extend_target_greedily(model.model, model.input, attn::generated_length(model.input)) == 4);
  const auto target = attn::token_lists(model.input.target_tokens);
  REQUIRE(target.size() == 1);
  CHECK(target[0] == std::vector<std::string>{"<BOS>", "J'", "aime", "l'", "IA"});
  CHECK(model.input.target_tokens.predicts_end == std::vector<bool>{true});
  // Each pick is the most probable token after the one before, <PAD>, <UNK> and <BOS> left out:
  // the run on the whole target predicts each next token, and <EOS> after the last.
  attn::Trace trace;
  trace.keep_entries(false);
  const attn::Tensor p = attn::run_model(model.model, model.input, trace);  // (B=1, T=5, V)
  const std::size_t V = p.shape[2];
  const auto never = model.model.vocab.never_written_ids();
  for (std::size_t t = 0; t < 5; ++t) {
    const auto top = attn::top_tokens(p.data.data() + t * V, V, 1, never);
    CHECK(model.model.vocab.token(top[0].id) == (t + 1 < 5 ? target[0][t + 1] : std::string("<EOS>")));
  }
}

TEST_CASE("a given target is not extended, and an untrained model writes up to the limit", "[generate]") {
  attn::LoadedModel given = default_model_reading("I love AI");
  attn::replace_target_text(given.model, given.input, "<BOS> J' aime", "--target");
  CHECK(attn::extend_target_greedily(given.model, given.input, 5) == 0);
  // The untrained example never predicts <EOS>: a one-word source gets 1 + 2 picks.
  attn::LoadedModel one_word = attn::load_model_text(attn::find_example("untrained_i_love_ai").json, "untrained");
  attn::replace_source_text(one_word.model, one_word.input, "Hello", "text");
  CHECK(attn::generated_length(one_word.input) == 3);
  CHECK(attn::extend_target_greedily(one_word.model, one_word.input, attn::generated_length(one_word.input)) == 3);
  CHECK(attn::token_lists(one_word.input.target_tokens)[0].size() == 4);
  CHECK(one_word.input.target_tokens.predicts_end == std::vector<bool>{false});
}

TEST_CASE("in a batch, a sentence that predicts <EOS> is padded while the others go on", "[generate]") {
  nlohmann::json file = nlohmann::json::parse(attn::default_model_json());
  file["input"] = {{"text", {"I love AI", "she eats the red apple"}}};
  attn::LoadedModel model = attn::load_model_text(file.dump(), "batch.json");
  const std::size_t added = attn::extend_target_greedily(model.model, model.input, attn::generated_length(model.input));
  const auto target = attn::token_lists(model.input.target_tokens);
  REQUIRE(target.size() == 2);
  // "Elle mange la pomme rouge" is five tokens: the batch grows by five, "I love AI"'s
  // sentence padded once after "IA" (where it predicted <EOS>).
  CHECK(added == 5);
  CHECK(target[0] == std::vector<std::string>{"<BOS>", "J'", "aime", "l'", "IA", "<PAD>"});
  CHECK(target[1] == std::vector<std::string>{"<BOS>", "Elle", "mange", "la", "pomme", "rouge"});
  CHECK(model.input.target_tokens.predicts_end == std::vector<bool>{true, true});
}
