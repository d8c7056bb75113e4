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
    attn::write_trace_file("/nonexistent-dir/trace.json", trace, model);
    FAIL("expected an error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()).rfind("/nonexistent-dir/trace.json: cannot write the dump: ", 0) == 0);
  }
  const std::string path = "attn_dump_test.json";
  std::remove(path.c_str());
  attn::write_trace_file(path, trace, model);
  std::ifstream in(path);
  CHECK(attn::Json::parse(in)["tensors"].size() == trace.entries().size());
  std::remove(path.c_str());
}

TEST_CASE("a streamed dump is the same text as the dump of a kept trace", "[dump]") {
  const attn::Model model = small_model(true);
  attn::Trace kept;
  attn::run_model(model, kept);
  std::ostringstream expected;
  attn::write_trace_json(expected, kept, model);

  attn::StringOutput out;
  attn::TraceDump dump(out, false, model);
  attn::Trace streamed;
  streamed.keep_entries(false);
  streamed.set_sink([&](const attn::TraceRecord& r) { dump.add(r); });
  attn::run_model(model, streamed);
  dump.finish(streamed);
  CHECK(streamed.entries().empty());
  CHECK(out.text == expected.str());
  // numbers as Python's json writes them: 0.1 stays "0.1", 1 is "1.0"
  CHECK(out.text.find("\"data\": [[[0.1, 0.2], [0.3, 0.4]]]") != std::string::npos);
}

TEST_CASE("a large tensor's text, formatted by two threads in parts, nests and round-trips exactly", "[dump]") {
  // 3 x 301 x 307 = 277,221 numbers: several parts of 65,536, rows split between them
  attn::Tensor t({3, 301, 307}, {"B", "S", "N"});
  for (std::size_t i = 0; i < t.size(); ++i) t.data[i] = std::sin(static_cast<double>(i)) * 1e3 / (1 + i % 7);
  const attn::Model model = small_model(false);
  attn::Trace trace;
  trace.record("big", t);
  std::ostringstream out;
  attn::write_trace_json(out, trace, model);
  const attn::Json doc = attn::Json::parse(out.str());
  const auto& data = doc["tensors"][0]["data"];
  REQUIRE(data.size() == 3);
  std::size_t mismatches = 0;
  for (std::size_t b = 0; b < 3; ++b) {
    REQUIRE(data[b].size() == 301);
    for (std::size_t s = 0; s < 301; ++s) {
      REQUIRE(data[b][s].size() == 307);
      for (std::size_t n = 0; n < 307; ++n) mismatches += data[b][s][n].get<double>() != t.at({b, s, n});
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("a .npz dump holds one array per trace entry", "[dump][npz]") {
  const attn::Model model = small_model(false);
  attn::Trace trace;
  attn::run_model(model, trace);
  attn::StringOutput out;
  attn::TraceDump dump(out, true, model);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
  // every entry's file name appears in a local header, in order
  std::size_t at = 0;
  for (const auto& e : trace.entries()) {
    at = out.text.find(e.name + ".npy", at);
    REQUIRE(at != std::string::npos);
  }
  CHECK(attn::TraceDump::is_npz_path("run.npz"));
  CHECK_FALSE(attn::TraceDump::is_npz_path("run.json"));
}

TEST_CASE("a dump abandoned mid-run (an error) leaves no file behind", "[dump][errors]") {
  const attn::Model model = small_model(false);
  const std::string path = "attn_dump_abandoned.npz";
  std::remove(path.c_str());
  {
    attn::TraceDump dump(path, model);
    attn::Trace trace;
    trace.set_sink([&](const attn::TraceRecord& r) { dump.add(r); });
    attn::run_model(model, trace);
    // no finish(): the run failed
  }
  CHECK_FALSE(std::ifstream(path).good());
}
