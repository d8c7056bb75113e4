// The optimizers, schedules and clipping of attn train, against hand-worked arithmetic
// (torch.optim's update rules written out in docs/training.md).
#include "train/optimizer.h"

#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/parameters.h"

namespace {

using Catch::Matchers::WithinAbs;

// One weight holding one number, as the optimizer sees a model's weights.
struct OneWeight {
  attn::Tensor w{attn::Shape{1}};
  std::vector<attn::Parameter> list() { return {attn::Parameter{attn::ParameterId{}, &w}}; }
};

std::vector<attn::Tensor> gradient(double g) {
  attn::Tensor t(attn::Shape{1});
  t.data[0] = g;
  return {t};
}

}  // namespace

TEST_CASE("Adam's first steps, worked by hand", "[train][optimizer]") {
  // w = 1, g = 0.5, lr = 0.1. Step 1: m = 0.1·0.5 = 0.05, v = 0.001·0.25 = 0.00025,
  // m̂ = 0.05 / (1 - 0.9) = 0.5, √v̂ = √(0.00025 / 0.001) = 0.5: w = 1 - 0.1·0.5/(0.5 + 1e-8).
  OneWeight one;
  one.w.data[0] = 1.0;
  attn::OptimizerOptions options;
  options.kind = attn::OptimizerKind::Adam;
  attn::Optimizer adam(options, one.list());
  adam.step(gradient(0.5), 0.1);
  const double after_one = 1.0 - 0.1 * 0.5 / (0.5 + 1e-8);
  CHECK_THAT(one.w.data[0], WithinAbs(after_one, 1e-15));
  // Step 2, g = -0.5: m = 0.9·0.05 - 0.05 = -0.005, v = 0.999·0.00025 + 0.00025 = 0.00049975,
  // m̂ = -0.005 / 0.19, v̂ = 0.00049975 / 0.001999 = 0.25 exactly, √v̂ = 0.5.
  adam.step(gradient(-0.5), 0.1);
  CHECK_THAT(one.w.data[0], WithinAbs(after_one + 0.1 * (0.005 / 0.19) / (0.5 + 1e-8), 1e-15));
  CHECK(adam.steps_taken() == 2);
}

TEST_CASE("Adam adds L2 decay to the gradient, AdamW decays the weight first", "[train][optimizer]") {
  // w = 1, g = 0.5, lr = 0.1, wd = 0.1.
  // Adam: g' = 0.5 + 0.1·1 = 0.6, the first step still moves by lr·g'/(|g'| + ε).
  // AdamW: w = 1·(1 - 0.1·0.1) = 0.99, then lr·0.5/(0.5 + ε).
  for (auto kind : {attn::OptimizerKind::Adam, attn::OptimizerKind::AdamW}) {
    OneWeight one;
    one.w.data[0] = 1.0;
    attn::OptimizerOptions options;
    options.kind = kind;
    options.weight_decay = 0.1;
    attn::Optimizer opt(options, one.list());
    opt.step(gradient(0.5), 0.1);
    if (kind == attn::OptimizerKind::Adam)
      CHECK_THAT(one.w.data[0], WithinAbs(1.0 - 0.1 * 0.6 / (0.6 + 1e-8), 1e-15));
    else
      CHECK_THAT(one.w.data[0], WithinAbs(0.99 - 0.1 * 0.5 / (0.5 + 1e-8), 1e-15));
  }
}

TEST_CASE("SGD with momentum: the buffer starts as the gradient", "[train][optimizer]") {
  // w = 1, g = 0.5 twice, lr = 0.1, μ = 0.9: buf 0.5 then 0.9·0.5 + 0.5 = 0.95;
  // w = 1 - 0.05 = 0.95, then 0.95 - 0.095 = 0.855.
  OneWeight one;
  one.w.data[0] = 1.0;
  attn::OptimizerOptions options;
  options.kind = attn::OptimizerKind::SGD;
  options.momentum = 0.9;
  attn::Optimizer sgd(options, one.list());
  sgd.step(gradient(0.5), 0.1);
  CHECK_THAT(one.w.data[0], WithinAbs(0.95, 1e-15));
  sgd.step(gradient(0.5), 0.1);
  CHECK_THAT(one.w.data[0], WithinAbs(0.855, 1e-15));
  CHECK(attn::Optimizer::state_bytes(options, 10) == 80);
  options.kind = attn::OptimizerKind::Adam;
  CHECK(attn::Optimizer::state_bytes(options, 10) == 160);
}

TEST_CASE("the schedules: constant with warmup, cosine, noam", "[train][optimizer]") {
  attn::OptimizerOptions o;
  o.lr = 1.0;
  o.warmup = 2;
  // constant: 1/2, then 1
  CHECK(attn::learning_rate(o, 1, 10, 16) == 0.5);
  CHECK(attn::learning_rate(o, 2, 10, 16) == 1.0);
  CHECK(attn::learning_rate(o, 9, 10, 16) == 1.0);
  // cosine over the 8 steps after the warmup: p = (step - 1 - 2) / 8
  o.schedule = attn::ScheduleKind::Cosine;
  CHECK(attn::learning_rate(o, 1, 10, 16) == 0.5);
  CHECK_THAT(attn::learning_rate(o, 3, 10, 16), WithinAbs(1.0, 1e-15));
  CHECK_THAT(attn::learning_rate(o, 7, 10, 16), WithinAbs(0.5, 1e-15));
  CHECK_THAT(attn::learning_rate(o, 10, 10, 16), WithinAbs(0.5 * (1 - 0.9238795325112867), 1e-15));
  // noam, d_model 16, warmup 4: 16^-0.5 · min(step^-0.5, step · 4^-1.5) = 0.25 · min(...)
  o.schedule = attn::ScheduleKind::Noam;
  o.warmup = 4;
  CHECK_THAT(attn::learning_rate(o, 1, 100, 16), WithinAbs(0.25 * 0.125, 1e-15));
  CHECK_THAT(attn::learning_rate(o, 4, 100, 16), WithinAbs(0.25 * 0.5, 1e-15));
  CHECK_THAT(attn::learning_rate(o, 16, 100, 16), WithinAbs(0.25 * 0.25, 1e-15));
}

TEST_CASE("clip_grad_norm_: the global norm over every weight, scaled by max/(norm + 1e-6)", "[train][optimizer]") {
  attn::Tensor a(attn::Shape{2}), b(attn::Shape{1});
  a.data = {3.0, 4.0};
  b.data = {12.0};
  std::vector<attn::Tensor> grads = {a, b};
  CHECK(attn::gradient_norm(grads) == 13.0);  // √(9 + 16 + 144)
  CHECK(attn::clip_gradients(grads, 6.5) == 13.0);
  const double c = 6.5 / (13.0 + 1e-6);
  CHECK(grads[0].data[0] == 3.0 * c);
  CHECK(grads[1].data[0] == 12.0 * c);
  // below the limit nothing changes (the coefficient is clamped to 1)
  std::vector<attn::Tensor> small = {a};
  attn::clip_gradients(small, 100);
  CHECK(small[0].data == std::vector<double>{3.0, 4.0});
}
