#include "model/examples.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/forward.h"
#include "attn/model_file.h"

TEST_CASE("every bundled example loads and runs", "[examples]") {
  REQUIRE(attn::bundled_examples().size() == 14);
  for (const auto& e : attn::bundled_examples()) {
    INFO(e.name);
    const attn::Model model = attn::load_model_text(e.json, e.name);
    attn::Trace trace(!model.batched);
    CHECK_NOTHROW(attn::run_model(model, trace));
    CHECK_FALSE(attn::example_summary(e).empty());
  }
}

TEST_CASE("find_example by full name, by its seed prefix, or a clear error", "[examples]") {
  CHECK(std::string(attn::find_example("seed000_batched_mha").name) == "seed000_batched_mha");
  CHECK(std::string(attn::find_example("seed004").name) == "seed004_i_love_ai");
  // a trained model by its task's name: attn train --task sort writes trained_sort
  for (const char* task : {"copy", "reverse", "sort", "translate"})
    CHECK(std::string(attn::find_example(task).name) == std::string("trained_") + task);
  CHECK(attn::example_short_name(attn::find_example("trained_sort")) == "sort");
  CHECK(attn::example_short_name(attn::find_example("seed004")).empty());
  CHECK_THROWS_WITH(
      attn::find_example("seed000_batched_mhb"),
      "--example: no bundled example called \"seed000_batched_mhb\" (did you mean \"seed000_batched_mha\"?); "
      "'attn examples' lists them");
}

TEST_CASE("example summaries are the first sentence of the comment", "[examples]") {
  CHECK(attn::example_summary(attn::find_example("seed002")) ==
        "Seed 002 (identity heads): \"I love machine learning\" as 4 embeddings, d_model 4, 2 heads of 2.");
}

TEST_CASE("the shipped trained models predict their input's labels", "[examples][trained]") {
  // Each trained file holds its first held-out example (never seen in training) as its input:
  // the translator's is "I love AI", labels "J' aime l' IA <EOS>".
  for (const char* name :
       {"trained_translate", "trained_copy", "trained_reverse", "trained_sort", "trained_induction"}) {
    INFO(name);
    const attn::Model model = attn::load_model_text(attn::find_example(name).json, name);
    attn::Trace trace(!model.batched);
    const attn::Tensor p = attn::run_model(model, trace);  // (T, V) probabilities, unbatched
    const std::size_t V = p.shape.back(), T = model.labels.size();
    REQUIRE(p.size() == T * V);
    for (std::size_t t = 0; t < T; ++t) {
      const auto label = static_cast<std::size_t>(model.labels.data[t]);
      if (label == *model.vocab.pad_id()) continue;
      INFO("position " << t << ", label " << model.vocab.token(label));
      CHECK(p.data[t * V + label] > 0.9);
    }
  }
  const attn::Model translator =
      attn::load_model_text(attn::find_example("trained_translate").json, "trained_translate");
  CHECK(translator.source_tokens.tokens == std::vector<std::vector<std::string>>{{"I", "love", "AI"}});
}
