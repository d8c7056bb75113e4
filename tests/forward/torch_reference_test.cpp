// Every tensor attn records for multi-head attention agrees with PyTorch's
// nn.MultiheadAttention (float64) to 1e-12 on random cases: batched (B=2, B=3) and unbatched
// input, with and without biases (and with some biases left out), causal masks (float -inf and
// bool in torch), one head, two and four heads, d_model 8..16, S from 1 to 7, and blocks without
// W_o (compared to torch's concatenation before out_proj).
//
// The cases and the values were made once by tests/reference/make_torch_mha_cases.py with
// Debian's python3-torch 1.13 and committed; this test needs no Python.
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "trace_lookup.h"

#include "attn/forward.h"
#include "attn/model_file.h"
#include "model/json_reader.h"
#include "reference_cases.h"

namespace {

using attn_test::expected_value;
using attn_test::kTolerance;
using attn_test::scaled_error;

const std::string kCaseDir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/torch_mha/";
std::vector<std::string> case_names() { return attn_test::case_names(kCaseDir); }

}  // namespace

TEST_CASE("the case list holds every generated case", "[torch]") {
  const std::vector<std::string> names = case_names();
  REQUIRE(names.size() >= 10);
  for (const auto& name : names) {
    INFO(name);
    CHECK(std::ifstream(kCaseDir + name + ".json").good());
    CHECK(std::ifstream(kCaseDir + name + ".expected.json").good());
  }
}

TEST_CASE("every recorded tensor agrees with torch.nn.MultiheadAttention to 1e-12", "[torch][forward]") {
  for (const std::string& name : case_names()) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected =
          attn::parse_json(attn::read_text_file(kCaseDir + name + ".expected.json"), name + ".expected.json");
      INFO(expected.at("description").get<std::string>());
      const attn::LoadedModel model = attn::load_model_file(kCaseDir + name + ".json");
      REQUIRE(model.input.batched == expected.at("batched").get<bool>());
      attn::Trace trace(!model.input.batched);
      attn::run_model(model.model, model.input, trace);

      // The same tensors in the same order: masked_scores only with a mask, output only with W_o.
      std::vector<std::string> expected_names, recorded_names;
      for (const auto& t : expected.at("tensors")) expected_names.push_back(t.at("name").get<std::string>());
      for (const auto& e : trace.entries()) recorded_names.push_back(e.name);
      CHECK(recorded_names == expected_names);

      for (const auto& t : expected.at("tensors")) {
        const std::string tensor_name = t.at("name").get<std::string>();
        INFO(tensor_name);
        const attn::TraceEntry* entry = find_entry(trace, tensor_name);
        REQUIRE(entry != nullptr);
        const attn::Tensor& actual = entry->tensor;
        REQUIRE(actual.shape == t.at("shape").get<attn::Shape>());
        const attn::Json& data = t.at("data");
        REQUIRE(actual.data.size() == data.size());

        // Count disagreements and report the worst, rather than one assertion per element.
        std::size_t mismatches = 0, worst_index = 0;
        double worst_error = -1;
        for (std::size_t i = 0; i < data.size(); ++i) {
          const double e = expected_value(data[i]);
          if (scaled_error(actual.data[i], e) <= kTolerance) continue;
          ++mismatches;
          const double error = std::isfinite(e) && std::isfinite(actual.data[i])
                                   ? std::fabs(actual.data[i] - e) / std::max(1.0, std::fabs(e))
                                   : std::numeric_limits<double>::infinity();
          if (error > worst_error) worst_error = error, worst_index = i;
        }
        INFO(fmt::format("worst flat index {}: attn {:.17g}, torch {:.17g}, scaled error {:.3g}", worst_index,
                         actual.data[worst_index], expected_value(data[worst_index]), worst_error));
        CHECK(mismatches == 0);
      }
    }
  }
}
