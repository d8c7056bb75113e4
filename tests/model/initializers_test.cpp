// The initializers of a model file ("xavier_uniform", "normal_0.02", "kaiming_uniform",
// {"randn": shape, "std": s}) draw what NumPy draws with PyTorch's bounds, in the file's
// draw order, sharing the one stream with "randn" (its cached second normal included).
// Made once by tests/reference/make_init_cases.py.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/model_file.h"
#include "attn/parameters.h"
#include "attn/trace.h"
#include "error_message.h"
#include "model/json_reader.h"

namespace {

const std::string kCases = std::string(ATTN_SOURCE_DIR) + "/tests/reference/init_cases.json";

}  // namespace

TEST_CASE("every initializer draws NumPy's values, in the file's order", "[model][initializers]") {
  const attn::Json cases = attn::parse_json(attn::read_text_file(kCases), kCases);
  const attn::LoadedModel model = attn::load_model_text(cases.at("model").dump(), "init.json");
  std::vector<std::pair<std::string, const attn::Tensor*>> drawn = {{"input", &model.input.X}};
  // the norms (gamma 1, beta 0) draw nothing
  for (const auto& p : attn::parameters(model.model))
    if (p.id.kind != attn::WeightKind::Gamma && p.id.kind != attn::WeightKind::Beta)
      drawn.push_back({attn::parameter_name(p.id), p.tensor});
  const attn::Json& values = cases.at("values");
  REQUIRE(drawn.size() == values.size());
  for (std::size_t i = 0; i < drawn.size(); ++i) {
    INFO(drawn[i].first);
    CHECK(drawn[i].first == values[i].at("name").get<std::string>());
    // the same bits: each value is one NumPy draw and one rounding, as NumPy makes it
    CHECK(drawn[i].second->data == values[i].at("data").get<std::vector<double>>());
  }
}

TEST_CASE("PyTorch's bounds, worked by hand", "[model][initializers]") {
  const attn::Json cases = attn::parse_json(attn::read_text_file(kCases), kCases);
  const attn::Json& b = cases.at("bounds");
  // xavier: sqrt(3) * sqrt(2 / (fan_in + fan_out)) = sqrt(6 / 6) = 1 for 3x3, sqrt(6/8) for 5x3
  CHECK(b.at("xavier_3x3").get<double>() == Approx(1.0).epsilon(1e-15));
  CHECK(b.at("xavier_5x3").get<double>() == Approx(std::sqrt(0.75)).epsilon(1e-15));
  // kaiming_uniform(a=sqrt(5)): sqrt(3) * sqrt(2 / 6) / sqrt(fan_in) = 1 / sqrt(3)
  CHECK(b.at("kaiming_fan_in_3").get<double>() == Approx(1 / std::sqrt(3.0)).epsilon(1e-15));
  const attn::LoadedModel model = attn::load_model_text(cases.at("model").dump(), "init.json");
  for (double v : model.model.encoder[0].attention.W_q.data) CHECK(std::fabs(v) <= b.at("xavier_3x3").get<double>());
}

TEST_CASE("a layer list can be one initializer, and fan-based ones need matrices", "[model][initializers]") {
  const auto model_with = [](const std::string& encoder, const std::string& extra = "") {
    return R"({"model": {"d_model": 4, "num_heads": 2, "d_ff": 8, "num_layers": 2}, "input": {"X": {"randn": [3, 4]}},
               "encoder": )" +
           encoder + extra + "}";
  };
  const attn::LoadedModel m = attn::load_model_text(model_with("\"xavier_uniform\""), "m.json");
  REQUIRE(m.model.encoder.size() == 2);
  // xavier on (4, 8): bound sqrt(6 / 12)
  for (double v : m.model.encoder[1].ffn.W_1.data) CHECK(std::fabs(v) <= std::sqrt(0.5));
  CHECK(m.model.encoder[0].attention.W_q.data != m.model.encoder[1].attention.W_q.data);
  CHECK(attn_test::input_error_of([&] {
          attn::load_model_text(
              R"({"model": {"d_model": 4, "num_heads": 2}, "input": {"X": {"randn": [3, 4]}},
                  "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "b_q": "xavier_uniform"}}]})",
              "m.json");
        }) == "m.json: encoder[0].attention.b_q: \"xavier_uniform\" needs a matrix, but this tensor has shape [4]");
  CHECK(attn_test::input_error_of([&] {
          attn::load_model_text(
              R"({"model": {"d_model": 4, "num_heads": 2}, "input": {"X": {"ones": [3, 4], "std": 2}},
                  "encoder": "randn"})",
              "m.json");
        }) == "m.json: input.X.std: only \"randn\" takes a \"std\"");
}
