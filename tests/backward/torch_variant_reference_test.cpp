// The modern variants (RMSNorm, gelu_tanh, SwiGLU, RoPE, grouped-query attention, a sliding
// window, and a Llama-style stack of them all) agree with PyTorch float64: every forward
// trace entry, the loss, and every gradient attn grad records, entries and weights, found
// by name, to 1e-12 of the largest value of each tensor. PyTorch 1.13 has no module for most
// of them: tests/reference/make_torch_variant_cases.py writes each in torch ops (as Llama's
// and Mistral's reference code do) and lets autograd give the gradients; this test needs no
// Python.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
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

const std::string kCaseDir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/torch_variants/";

// |attn - torch| <= 1e-12 of the largest |torch| of the tensor (absolute for an all-zero one).
constexpr double kTolerance = 1e-12;

// Recorded by attn, not by the reference: dL/dp of the output head's probabilities, which
// F.cross_entropy never forms (tests/backward/torch_grad_reference_test.cpp checks it).
bool only_attn_records(const std::string& name) { return name == "grad.output.probabilities"; }

// The largest finite |value| of an expected tensor.
double largest(const attn::Json& tensor) {
  double scale = 0;
  for (const auto& v : tensor.at("data"))
    if (std::isfinite(expected_value(v))) scale = std::max(scale, std::fabs(expected_value(v)));
  return scale;
}

// The scale a tensor's error is measured against: its largest value, except for
// grad.<block>.b_k without RoPE, which is exactly 0 (a bias added to every key adds the same
// q · b_k to all of a query's scores, which the softmax ignores): PyTorch's values and
// attn's are both rounding noise of the sum of the key gradients, so it is measured
// against grad.<block>.k, as tests/backward/torch_grad_reference_test.cpp does. (With RoPE
// the keys are turned by position and b_k does get a gradient.)
double error_scale(const attn::Json& tensors, const attn::Json& t) {
  const std::string name = t.at("name").get<std::string>(), suffix = ".b_k";
  double scale = largest(t);
  if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return scale;
  const std::string keys = name.substr(0, name.size() - suffix.size()) + ".k";
  for (const auto& other : tensors)
    if (other.at("name").get<std::string>() == keys) scale = std::max(scale, largest(other));
  return scale;
}

}  // namespace

TEST_CASE("the variant reference case list holds every generated case", "[torch][variants]") {
  const std::vector<std::string> names = attn_test::case_names(kCaseDir);
  REQUIRE(names.size() >= 2);
}

TEST_CASE("the variants' forward entries and gradients agree with PyTorch float64 to 1e-12", "[torch][variants]") {
  for (const std::string& name : attn_test::case_names(kCaseDir)) {
    DYNAMIC_SECTION(name) {
      const auto [expected, run] = attn_test::load_backward_case(kCaseDir, name);
      const attn::Model& model = run.model;
      INFO(expected.at("description").get<std::string>());
      REQUIRE(run.input.batched == expected.at("batched").get<bool>());
      attn::Trace trace(!run.input.batched);
      attn::run_model(model, run.input, trace);
      attn::run_backward(model, run.input, trace);

      std::map<std::string, const attn::Tensor*> recorded;
      for (const auto& e : trace.entries()) recorded[e.name] = &e.tensor;
      std::map<std::string, bool> listed;
      double worst_case = 0;
      std::string worst_tensor;
      for (const attn::Json& t : expected.at("tensors")) {
        const std::string tensor = t.at("name").get<std::string>();
        INFO(tensor);
        listed[tensor] = true;
        REQUIRE(recorded.count(tensor) == 1);
        const attn::Tensor& actual = *recorded[tensor];
        REQUIRE(actual.shape == t.at("shape").get<attn::Shape>());
        const attn::Json& data = t.at("data");
        REQUIRE(actual.data.size() == data.size());
        const double scale = error_scale(expected.at("tensors"), t);
        double worst = 0;
        for (std::size_t i = 0; i < data.size(); ++i) {
          const double want = expected_value(data[i]);
          if (std::isinf(want)) {
            CHECK(actual.data[i] == want);  // a masked score stays -inf
            continue;
          }
          const double error = std::fabs(actual.data[i] - want);
          if (!(error <= worst)) worst = error;  // NaN counts as the worst
        }
        const double relative = scale > 0 ? worst / scale : worst;
        CHECK(relative <= kTolerance);
        if (relative > worst_case) worst_case = relative, worst_tensor = tensor;
      }
      // Every gradient attn records is checked (no entry without its reference).
      for (const auto& e : trace.entries()) {
        INFO(e.name);
        if (!only_attn_records(e.name)) CHECK(listed.count(e.name) == 1);
      }
      // The figures, for a report: ATTN_TEST_REPORT=1 build/tests/attn_tests "[variants]"
      if (std::getenv("ATTN_TEST_REPORT"))
        WARN(fmt::format("{}: {} tensors, worst error {:.2e} of the tensor's largest value ({})", name,
                         expected.at("tensors").size(), worst_case, worst_tensor));
    }
  }
}
