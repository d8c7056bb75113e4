// --dump-parameters (issue 25): auto, yes and no, and what each leaves in a JSON or .npz dump.
#include <algorithm>
#include <iterator>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "attn/dump.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/parameters.h"
#include "model/json_reader.h"

namespace {
// The names in a JSON dump's "tensors" and "parameters" lists.
std::set<std::string> dumped_names(const attn::LoadedModel& loaded, const attn::Trace& trace,
                                   attn::DumpParameters choice) {
  std::ostringstream out;
  attn::DumpOptions options;
  options.parameters = choice;
  options.non_finite = attn::JsonNonFinite::Null;  // the decoder's masked scores, for nlohmann
  attn::write_trace_json(out, trace, loaded.model, loaded.input, options);
  const attn::Json doc = attn::Json::parse(out.str());
  std::set<std::string> names;
  for (const auto& list : {doc["tensors"], doc["parameters"]})
    for (const auto& t : list) names.insert(t["name"].get<std::string>());
  return names;
}

// An encoder of one attention block of width N, identity weights: 4 N² parameters.
attn::Model attention_of_width(std::size_t N) {
  std::string row = "[";
  for (std::size_t i = 0; i < N; ++i) row += i ? ", 0.5" : "0.5";
  row += "]";
  return attn::load_model_text(R"({"model": {"d_model": )" + std::to_string(N) + R"(, "num_heads": 1},
      "input": {"X": [[)" + row + R"(]]},
      "encoder": [{"attention": {"W_q": "identity", "W_k": "identity", "W_v": "identity", "W_o": "identity"}}]})",
                               "wide.json")
      .model;
}
}  // namespace

TEST_CASE("dumping the parameters (yes) adds exactly them to a dump without them (no)", "[dump][parameters]") {
  const attn::LoadedModel loaded =
      attn::load_model_file(std::string(ATTN_SOURCE_DIR) + "/data/examples/seed004_i_love_ai.json");
  attn::Trace trace;
  attn::run_model(loaded.model, loaded.input, trace);
  const std::set<std::string> yes = dumped_names(loaded, trace, attn::DumpParameters::Yes);
  const std::set<std::string> no = dumped_names(loaded, trace, attn::DumpParameters::No);
  std::set<std::string> added;
  std::set_difference(yes.begin(), yes.end(), no.begin(), no.end(), std::inserter(added, added.end()));
  std::set<std::string> parameter_names;
  for (const auto& p : attn::parameters(loaded.model)) parameter_names.insert(attn::parameter_name(p.id));
  CHECK(added == parameter_names);
  CHECK(added.count("encoder.0.attention.W_q") == 1);
  CHECK(added.count("embedding") == 1);
  CHECK(std::includes(yes.begin(), yes.end(), no.begin(), no.end()));  // nothing else differs
  CHECK(no.size() == trace.entries().size());
  // A model this small (seed 004: d_model 4) is far below 16 MiB: auto keeps them.
  CHECK(dumped_names(loaded, trace, attn::DumpParameters::Auto) == yes);
  // The .npz leaves the arrays out too, and lists none in __meta__.json.
  attn::StringOutput npz;
  attn::DumpOptions options;
  options.parameters = attn::DumpParameters::No;
  attn::TraceDump dump(npz, attn::DumpFormat::Npz, loaded.model, loaded.input, options);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
  CHECK(npz.text.find("encoder.0.ffn.W_1.npy") == std::string::npos);
  CHECK(npz.text.find(R"("parameters": [])") != std::string::npos);
}

TEST_CASE("auto dumps the parameters up to 16 MiB of float64", "[dump][parameters]") {
  // 4 x 724² = 2,096,704 doubles = 16,773,632 bytes <= 16 MiB (16,777,216);
  // 4 x 725² = 2,102,500 doubles = 16,820,000 bytes > 16 MiB.
  const attn::Model below = attention_of_width(724), above = attention_of_width(725);
  REQUIRE(attn::parameter_count(below) == 2096704);
  REQUIRE(attn::parameter_count(above) == 2102500);
  CHECK(attn::dump_includes_parameters(attn::DumpParameters::Auto, below));
  CHECK_FALSE(attn::dump_includes_parameters(attn::DumpParameters::Auto, above));
  CHECK(attn::dump_includes_parameters(attn::DumpParameters::Yes, above));
  CHECK_FALSE(attn::dump_includes_parameters(attn::DumpParameters::No, below));
  CHECK(attn::parse_dump_parameters("auto") == attn::DumpParameters::Auto);
  CHECK(attn::parse_dump_parameters("yes") == attn::DumpParameters::Yes);
  CHECK(attn::parse_dump_parameters("no") == attn::DumpParameters::No);
  CHECK_FALSE(attn::parse_dump_parameters("true").has_value());
}
