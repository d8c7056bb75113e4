// The training loop: one SGD step is w - lr·dL/dw with the gradients attn grad computes (which
// tests/backward checks against PyTorch), for numbers in and output_grad; the same run gives
// the same bits.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/backward.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/parameters.h"
#include "attn/trace.h"
#include "attn/train.h"

namespace {

// Two examples of 3 positions over d_model 4, each with dL/d(output); the model file's own
// input is a third, which training does not read.
const char* const kModel = R"({"model": {"d_model": 4, "num_heads": 2, "seed": 5, "positional_encoding": "none"},
  "input": {"X": [[0.5, 0.5, 0.5, 0.5], [1, 2, 3, 4], [0, 0, 1, 0]], "output_grad": "ones"},
  "encoder": [{"attention": {"W_q": "xavier_uniform", "W_k": "xavier_uniform", "W_v": "xavier_uniform",
                             "W_o": "xavier_uniform", "b_o": "zeros"}}]})";
const char* const kData =
    "{\"X\": [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0]], \"output_grad\": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]}\n"
    "{\"X\": [[0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]], \"output_grad\": [[0, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, "
    "0]]}\n";

}  // namespace

TEST_CASE("one SGD step is w + (-lr)·dL/dw of the batch", "[train][loop]") {
  attn::LoadedModel model = attn::load_model_text(kModel, "m.json");
  const attn::Dataset data = attn::parse_dataset(kData, "d.jsonl", model.model);

  // dL/dw of both examples as one batch, by attn grad's backward pass
  const attn::RunInput batch = attn::batch_input(model.model, data, {0, 1});
  attn::Trace trace(false);
  attn::run_model(model.model, batch, trace);
  const double loss = attn::run_backward(model.model, batch, trace);
  std::vector<std::vector<double>> expected;
  for (const auto& p : attn::parameters(model.model)) {
    const attn::TraceEntry* g = nullptr;
    for (const auto& e : trace.entries())
      if (e.name == "grad." + attn::parameter_name(p.id)) g = &e;
    REQUIRE(g != nullptr);
    std::vector<double> w(p.tensor->data.begin(), p.tensor->data.end());
    for (std::size_t k = 0; k < w.size(); ++k) w[k] = w[k] + -0.1 * g->tensor.data[k];  // torch's add_(g, alpha=-lr)
    expected.push_back(w);
  }

  attn::TrainOptions options;
  options.steps = 1;
  options.batch_size = 2;
  options.shuffle = false;
  options.optimizer.kind = attn::OptimizerKind::SGD;
  options.optimizer.lr = 0.1;
  const std::vector<double> losses = attn::train_model(model.model, data, nullptr, options, {});
  REQUIRE(losses.size() == 1);
  CHECK(losses[0] == loss);
  const auto weights = attn::parameters(model.model);
  REQUIRE(weights.size() == expected.size());
  for (std::size_t i = 0; i < weights.size(); ++i) {
    INFO(attn::parameter_name(weights[i].id));
    CHECK(weights[i].tensor->data == expected[i]);
  }

  // held out: the mean of sum(output ⊙ output_grad) over the batches, here one
  const attn::EvalReport eval = attn::evaluate(model.model, data, 8);
  CHECK(eval.examples == 2);
  CHECK_FALSE(eval.has_labels);
}

TEST_CASE("training twice gives the same bits, shuffled or not", "[train][loop]") {
  for (bool shuffle : {false, true}) {
    attn::LoadedModel a = attn::load_model_text(kModel, "m.json");
    attn::LoadedModel b = attn::load_model_text(kModel, "m.json");
    const attn::Dataset data = attn::parse_dataset(kData, "d.jsonl", a.model);
    attn::TrainOptions options;
    options.steps = 7;
    options.batch_size = 1;
    options.shuffle = shuffle;
    options.seed = 3;
    options.clip = 0.5;
    CHECK(attn::train_model(a.model, data, nullptr, options, {}) ==
          attn::train_model(b.model, data, nullptr, options, {}));
    const auto wa = attn::parameters(a.model), wb = attn::parameters(b.model);
    for (std::size_t i = 0; i < wa.size(); ++i) CHECK(wa[i].tensor->data == wb[i].tensor->data);
  }
}
