#include "attn/trace_dump.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/json_reader.h"
#include "attn/model_loader.h"

namespace {
attn::Model small_model(bool causal) {
  return attn::load_model_text(std::string(R"({"model": {"d_model": 2, "num_heads": 1, "causal": )") +
                                   (causal ? "true" : "false") + R"(},
      "input": {"X": [[[0.1, 0.2], [0.3, 0.4]]]},
      "encoder": [{"attention": {"W_q": "identity", "W_k": "identity", "W_v": "identity", "W_o": "identity"}}]})",
                               "small.json");
}
}  // namespace

TEST_CASE("the dump holds every tensor, in order, nested like its shape, full precision", "[dump]") {
  const attn::Model model = small_model(false);
  attn::Trace trace;
  attn::run_model(model, trace);
  std::ostringstream out;
  attn::write_trace_json(out, trace, model);
  const attn::Json doc = attn::Json::parse(out.str());
  CHECK(doc["format"] == "attn-trace");
  CHECK(doc["version"] == 1);
  CHECK(doc["model"]["d_model"] == 2);
  CHECK(doc["model"]["num_heads"] == 1);
  const auto& tensors = doc["tensors"];
  REQUIRE(tensors.size() == trace.entries().size());
  CHECK(tensors[0]["name"] == "input");
  CHECK(tensors[0]["shape"] == attn::Json::array({1, 2, 2}));
  CHECK(tensors[0]["axes"] == attn::Json::array({"B", "S", "N"}));
  CHECK(tensors[0]["data"][0][1][0].get<double>() == 0.3);
  // shortest round-trip: parsing the text gives the exact double back
  const auto& weights = trace.find("encoder.0.attention.weights")->tensor;
  for (const auto& t : tensors)
    if (t["name"] == "encoder.0.attention.weights") CHECK(t["data"][0][0][0][1].get<double>() == weights.at({0, 0, 0, 1}));
}

TEST_CASE("masked scores dump -inf as -Infinity, as Python's json reads it", "[dump]") {
  const attn::Model model = small_model(true);
  attn::Trace trace;
  attn::run_model(model, trace);
  std::ostringstream out;
  attn::write_trace_json(out, trace, model);
  CHECK(out.str().find("\"name\": \"encoder.0.attention.masked_scores\"") != std::string::npos);
  CHECK(out.str().find("-Infinity") != std::string::npos);
}

TEST_CASE("an unwritable dump path is an input error and leaves no file", "[dump][errors]") {
  const attn::Model model = small_model(false);
  attn::Trace trace;
  attn::run_model(model, trace);
  try {
    attn::write_trace_json_file("/nonexistent-dir/trace.json", trace, model);
    FAIL("expected an error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()).rfind("/nonexistent-dir/trace.json: cannot write the dump: ", 0) == 0);
  }
  const std::string path = "attn_dump_test.json";
  std::remove(path.c_str());
  attn::write_trace_json_file(path, trace, model);
  std::ifstream in(path);
  CHECK(attn::Json::parse(in)["tensors"].size() == trace.entries().size());
  std::remove(path.c_str());
}
