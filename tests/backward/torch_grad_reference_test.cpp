// The loss and every gradient attn grad records agree with PyTorch's autograd (float64) to
// 1e-10 of the largest value of each tensor: the weights' gradients, the input's and every
// intermediate's, in attn's order and under its names. The cases span attention alone over
// numbers with output_grad (batched and not, causal, biases, per-head weights, d_head other
// than d_model / H, blocks without W_o, padding with fully masked rows) and whole
// transformers with tokens and labels (<PAD> labels ignored, post- and pre-norm, ReLU and
// GELU, tied and linear heads, learned positions, scaled embeddings, several layers).
//
// Made once by tests/reference/make_torch_grad_cases.py with Debian's python3-torch 1.13,
// whose whole-transformer gradients are checked there against the torch.nn modules' own
// backward; this test needs no Python.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "attn/backward.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "model/json_reader.h"
#include "reference_cases.h"

namespace {

using attn_test::expected_value;

const std::string kCaseDir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/torch_grad/";

// |attn - torch| <= 1e-10 of the largest |torch| of the tensor.
constexpr double kTolerance = 1e-10;

// The largest |value| of a tensor of the expected file.
double largest(const attn::Json& tensor) {
  double scale = 0;
  for (const auto& v : tensor.at("data")) scale = std::max(scale, std::fabs(expected_value(v)));
  return scale;
}

// The scale the error of tensor k is measured against: its largest value, except for
// grad.<block>.b_k. That gradient is exactly 0 (a bias added to every key adds the same
// q · b_k to all of a query's scores, which the softmax ignores), so PyTorch's values and
// attn's are both rounding noise of the sum of the key gradients (db_k = Σ dK over the
// positions): it is measured against the largest of those, grad.<block>.k.
double error_scale(const attn::Json& tensors, std::size_t k) {
  const std::string name = tensors[k].at("name").get<std::string>();
  const std::string suffix = ".b_k";
  if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return largest(tensors[k]);
  const std::string keys = name.substr(0, name.size() - suffix.size()) + ".k";
  for (const auto& t : tensors)
    if (t.at("name").get<std::string>() == keys) return std::max(largest(tensors[k]), largest(t));
  FAIL("no " << keys << " beside " << name);
  return 0;
}

}  // namespace

TEST_CASE("the torch gradient case list holds every generated case", "[torch][backward]") {
  const std::vector<std::string> names = attn_test::case_names(kCaseDir);
  REQUIRE(names.size() >= 12);
  for (const auto& name : names) {
    INFO(name);
    CHECK(std::ifstream(kCaseDir + name + ".json").good());
    CHECK(std::ifstream(kCaseDir + name + ".expected.json").good());
  }
}

TEST_CASE("the loss and every gradient agree with PyTorch's autograd to 1e-10", "[torch][backward]") {
  for (const std::string& name : attn_test::case_names(kCaseDir)) {
    DYNAMIC_SECTION(name) {
      const auto [expected, run] = attn_test::load_backward_case(kCaseDir, name);
      const attn::Model& model = run.model;
      INFO(expected.at("description").get<std::string>());
      REQUIRE(run.input.batched == expected.at("batched").get<bool>());
      attn::Trace trace(!run.input.batched);
      attn::run_model(model, run.input, trace);
      const std::size_t forward_entries = trace.entries().size();
      attn::run_backward(model, run.input, trace);

      // The same tensors under the same names in the same order, from the loss on.
      const auto& entries = trace.entries();
      std::vector<std::string> expected_names, recorded_names;
      for (const auto& t : expected.at("tensors")) expected_names.push_back(t.at("name").get<std::string>());
      for (std::size_t i = forward_entries; i < entries.size(); ++i) recorded_names.push_back(entries[i].name);
      REQUIRE(recorded_names == expected_names);

      double worst_case = 0;
      std::string worst_tensor;
      for (std::size_t k = 0; k < expected_names.size(); ++k) {
        const attn::Json& t = expected.at("tensors")[k];
        const attn::Tensor& actual = entries[forward_entries + k].tensor;
        INFO(expected_names[k]);
        REQUIRE(actual.shape == t.at("shape").get<attn::Shape>());
        const attn::Json& data = t.at("data");
        REQUIRE(actual.data.size() == data.size());
        const double scale = error_scale(expected.at("tensors"), k);
        double worst = 0;
        std::size_t worst_index = 0;
        for (std::size_t i = 0; i < data.size(); ++i) {
          const double error = std::fabs(actual.data[i] - expected_value(data[i]));
          if (!(error <= worst)) worst = error, worst_index = i;  // NaN counts as the worst
        }
        const double relative = scale > 0 ? worst / scale : worst;
        INFO(fmt::format("worst flat index {}: attn {:.17g}, torch {:.17g}, error scale {:.3g}", worst_index,
                         actual.data[worst_index], expected_value(data[worst_index]), scale));
        // The decoder-only (GPT-2 style) cases, issue 15's, are held to 1e-12.
        CHECK(worst <= (name.rfind("gpt_", 0) == 0 ? 1e-12 : kTolerance) * scale);
        if (relative > worst_case) worst_case = relative, worst_tensor = expected_names[k];
      }
      // The figures, for a report: ATTN_TEST_REPORT=1 build/tests/attn_tests "[torch][backward]"
      if (std::getenv("ATTN_TEST_REPORT"))
        WARN(fmt::format("{}: {} tensors, worst error {:.2e} of the tensor's largest value ({})", name,
                         expected_names.size(), worst_case, worst_tensor));
    }
  }
}
