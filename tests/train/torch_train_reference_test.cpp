// attn train's updates are torch.optim's: the same model (torch.nn's modules, float64) trained
// for 20 steps on the same batches (--no-shuffle) with the same optimizer (Adam with clipping
// and a cosine schedule, AdamW with the noam schedule and a tied head, Adam with L2 weight
// decay, SGD with momentum), every weight within 1e-9 of its tensor's largest value and every
// step's loss within 1e-12.
//
// Made once by tests/reference/make_torch_train_cases.py with Debian's python3-torch 1.13;
// this test needs no Python.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "attn/model_file.h"
#include "attn/parameters.h"
#include "attn/trace.h"
#include "attn/train.h"
#include "model/json_reader.h"
#include "reference_cases.h"

namespace {

const std::string kCaseDir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/torch_train/";

constexpr double kWeightTolerance = 1e-9;
constexpr double kLossTolerance = 1e-12;

// A key bias's gradient is exactly 0 (q · b_k is added to every score of a query, which the
// softmax ignores), so attn's and PyTorch's are rounding noise of size ~1e-16 of the keys'
// gradients, and Adam, which divides by √v + ε, turns that noise into steps of up to
// lr · |g| / ε ≈ lr · 1e-7 (ε = 1e-8, |g| below 1e-15 here): b_k is held to that bound summed
// over the steps rather than to the tolerance.
bool is_key_bias(const std::string& name) { return name.size() >= 4 && name.compare(name.size() - 4, 4, ".b_k") == 0; }

attn::TrainOptions options_of(const attn::Json& o) {
  attn::TrainOptions t;
  const std::string optimizer = o.at("optimizer").get<std::string>();
  t.optimizer.kind = optimizer == "sgd"     ? attn::OptimizerKind::SGD
                     : optimizer == "adamw" ? attn::OptimizerKind::AdamW
                                            : attn::OptimizerKind::Adam;
  const std::string schedule = o.at("schedule").get<std::string>();
  t.optimizer.schedule = schedule == "cosine" ? attn::ScheduleKind::Cosine
                         : schedule == "noam" ? attn::ScheduleKind::Noam
                                              : attn::ScheduleKind::Constant;
  t.optimizer.lr = o.at("lr").get<double>();
  t.optimizer.weight_decay = o.at("weight_decay").get<double>();
  t.optimizer.momentum = o.at("momentum").get<double>();
  t.optimizer.warmup = o.at("warmup").get<std::size_t>();
  t.clip = o.at("clip").get<double>();
  t.steps = o.at("steps").get<std::size_t>();
  t.batch_size = o.at("batch_size").get<std::size_t>();
  t.shuffle = false;
  return t;
}

}  // namespace

TEST_CASE("the torch training case list holds every generated case", "[torch][train]") {
  const std::vector<std::string> names = attn_test::case_names(kCaseDir);
  REQUIRE(names.size() == 4);
  for (const auto& name : names) {
    INFO(name);
    CHECK(std::ifstream(kCaseDir + name + ".json").good());
    CHECK(std::ifstream(kCaseDir + name + ".jsonl").good());
    CHECK(std::ifstream(kCaseDir + name + ".expected.json").good());
  }
}

TEST_CASE("20 steps of attn train are 20 steps of torch.optim to 1e-9", "[torch][train]") {
  for (const std::string& name : attn_test::case_names(kCaseDir)) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected =
          attn::parse_json(attn::read_text_file(kCaseDir + name + ".expected.json"), name + ".expected.json");
      INFO(expected.at("description").get<std::string>());
      attn::LoadedModel model = attn::load_model_file(kCaseDir + name + ".json", attn::LoadOptions{});
      const attn::Dataset data = attn::read_dataset(kCaseDir + name + ".jsonl", model.model);
      const attn::TrainOptions options = options_of(expected.at("options"));
      double lr_sum = 0;
      attn::TrainCallbacks callbacks;
      callbacks.on_step = [&](const attn::StepReport& r) { lr_sum += r.lr; };
      const std::vector<double> losses = attn::train_model(model.model, data, nullptr, options, callbacks);

      const auto expected_losses = expected.at("losses").get<std::vector<double>>();
      REQUIRE(losses.size() == expected_losses.size());
      for (std::size_t s = 0; s < losses.size(); ++s) {
        INFO("step " << s + 1);
        CHECK(std::fabs(losses[s] - expected_losses[s]) <= kLossTolerance * std::max(1.0, expected_losses[s]));
      }

      const auto weights = attn::parameters(model.model);
      const attn::Json& expected_weights = expected.at("weights");
      REQUIRE(weights.size() == expected_weights.size());
      double worst_case = 0;
      std::string worst_name;
      for (std::size_t k = 0; k < weights.size(); ++k) {
        const attn::Json& w = expected_weights[k];
        const std::string weight_name = w.at("name").get<std::string>();
        INFO(weight_name);
        REQUIRE(attn::parameter_name(weights[k].id) == weight_name);
        const attn::Tensor& actual = *weights[k].tensor;
        REQUIRE(actual.shape == w.at("shape").get<attn::Shape>());
        const auto data = w.at("data").get<std::vector<double>>();
        double scale = 0, worst = 0;
        for (double v : data) scale = std::max(scale, std::fabs(v));
        for (std::size_t i = 0; i < data.size(); ++i) worst = std::max(worst, std::fabs(actual.data[i] - data[i]));
        if (is_key_bias(weight_name) && options.optimizer.kind != attn::OptimizerKind::SGD) {
          CHECK(worst <= 1e-7 * lr_sum);
          continue;
        }
        CHECK(worst <= kWeightTolerance * scale);
        if (worst / scale > worst_case) worst_case = worst / scale, worst_name = weight_name;
      }
      // The figures, for a report: ATTN_TEST_REPORT=1 build/tests/attn_tests "[torch][train]"
      if (std::getenv("ATTN_TEST_REPORT"))
        WARN(fmt::format("{}: {} weights, worst error {:.2e} of the tensor's largest value ({})", name, weights.size(),
                         worst_case, worst_name));
    }
  }
}
