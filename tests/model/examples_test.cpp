#include "model/examples.h"

#include <catch2/catch.hpp>

#include "attn/forward.h"
#include "attn/model_file.h"

TEST_CASE("every bundled example loads and runs", "[examples]") {
  REQUIRE(attn::bundled_examples().size() == 8);
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
  CHECK_THROWS_WITH(
      attn::find_example("seed000_batched_mhb"),
      "--example: no bundled example called \"seed000_batched_mhb\" (did you mean \"seed000_batched_mha\"?); "
      "'attn examples' lists them");
}

TEST_CASE("example summaries are the first sentence of the comment", "[examples]") {
  CHECK(attn::example_summary(attn::find_example("seed002")) ==
        "Seed 002 (identity heads): \"I love machine learning\" as 4 embeddings, d_model 4, 2 heads of 2.");
}
