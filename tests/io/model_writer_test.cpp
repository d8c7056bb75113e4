// The model file attn train writes reads back as the same model: every weight to the bit,
// the same choices, the same input; and writing it again gives the same text.
#include "attn/model_writer.h"

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/parameters.h"
#include "attn/trace.h"
#include "model/default_model.h"
#include "model/examples.h"

TEST_CASE("the default model and every bundled example survive writing and reading back, bit for bit",
          "[io][model_writer]") {
  std::vector<std::pair<std::string, std::string>> files = {{"default model", attn::default_model_json()}};
  for (const auto& example : attn::bundled_examples()) files.push_back({example.name, example.json});
  for (const auto& [name, json] : files) {
    INFO(name);
    const attn::LoadedModel original = attn::load_model_text(json, name);
    const std::string text = attn::model_file_json(original.model, original.input, "written");
    const attn::LoadedModel back = attn::load_model_text(text, "written.json");
    const auto a = attn::parameters(original.model), b = attn::parameters(back.model);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO(attn::parameter_name(a[i].id));
      CHECK(attn::parameter_name(a[i].id) == attn::parameter_name(b[i].id));
      CHECK(a[i].tensor->shape == b[i].tensor->shape);
      CHECK(a[i].tensor->data == b[i].tensor->data);
    }
    CHECK(back.input.X.data == original.input.X.data);
    CHECK(back.input.labels.data == original.input.labels.data);
    CHECK(back.input.output_grad.data == original.input.output_grad.data);
    CHECK(back.input.batched == original.input.batched);
    // the run is the same run: the same final output, bit for bit
    attn::Trace ta(!original.input.batched), tb(!back.input.batched);
    CHECK(attn::run_model(original.model, original.input, ta).data == attn::run_model(back.model, back.input, tb).data);
    CHECK(attn::model_file_json(back.model, back.input, "written") == text);
  }
}
