#include "train/optimizer.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/trace.h"
#include "core/numeric_check.h"
#include "core/require.h"

namespace attn {

namespace {
constexpr double kPi = 3.141592653589793;  // Python's math.pi
}  // namespace

Optimizer::Optimizer(const OptimizerOptions& options, std::vector<Parameter> weights)
    : options_(options), weights_(std::move(weights)) {
  const bool two_moments = options_.kind != OptimizerKind::SGD;
  const bool momentum = options_.kind == OptimizerKind::SGD && options_.momentum != 0;
  for (const Parameter& p : weights_) {
    first_.emplace_back(two_moments || momentum ? p.tensor->size() : 0, 0.0);
    second_.emplace_back(two_moments ? p.tensor->size() : 0, 0.0);
  }
}

std::size_t Optimizer::state_bytes(const OptimizerOptions& options, std::size_t parameter_count) {
  const std::size_t tensors = options.kind != OptimizerKind::SGD ? 2 : (options.momentum != 0 ? 1 : 0);
  return tensors * parameter_count * sizeof(double);
}

void Optimizer::step(const std::vector<Tensor>& gradients, double lr) {
  require(gradients.size() == weights_.size(), "Optimizer::step: one gradient per weight");
  ++steps_;
  for (std::size_t i = 0; i < weights_.size(); ++i) {
    Tensor& w = *weights_[i].tensor;
    require(gradients[i].size() == w.size(), "Optimizer::step: a gradient of another size");
    if (options_.kind == OptimizerKind::SGD)
      sgd(w, gradients[i], i, lr);
    else
      adam(w, gradients[i], i, lr);
    // A weight that is no longer a number makes every later step garbage, and a model file
    // cannot hold it: training stops here, at the first one, naming the step and the weight.
    try {
      check_finite(parameter_name(weights_[i].id), w);
    } catch (const NumericError& e) {
      throw TrainingStopped(
          fmt::format("update {}: {}: training stopped and wrote no model (a smaller --lr, or "
                      "--clip, keeps the weights finite)",
                      steps_, e.what()));
    }
  }
}

void Optimizer::sgd(Tensor& w, const Tensor& dw, std::size_t i, double lr) {
  // torch.optim.SGD (dampening 0, not Nesterov): each operation rounded once, as torch's
  const double wd = options_.weight_decay, mu = options_.momentum;
  double* buf = first_[i].data();
  for (std::size_t k = 0; k < w.size(); ++k) {
    double g = dw.data[k];
    if (wd != 0) g = g + wd * w.data[k];
    if (mu != 0) {
      buf[k] = steps_ == 1 ? g : buf[k] * mu + g;
      g = buf[k];
    }
    w.data[k] = w.data[k] + -lr * g;
  }
}

void Optimizer::adam(Tensor& w, const Tensor& dw, std::size_t i, double lr) {
  // torch.optim.Adam / AdamW, the single-tensor path (foreach=False, torch's default on CPU)
  const double b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps, wd = options_.weight_decay;
  const bool decoupled = options_.kind == OptimizerKind::AdamW;
  const double t = static_cast<double>(steps_);
  const double bias_correction1 = 1 - std::pow(b1, t);
  const double bias_correction2_sqrt = std::sqrt(1 - std::pow(b2, t));
  const double step_size = lr / bias_correction1;
  double* m = first_[i].data();
  double* v = second_[i].data();
  for (std::size_t k = 0; k < w.size(); ++k) {
    double p = w.data[k];
    double g = dw.data[k];
    if (decoupled)
      p = p * (1 - lr * wd);  // param.mul_(1 - lr * weight_decay)
    else if (wd != 0)
      g = g + wd * p;  // grad.add(param, alpha=weight_decay)
    m[k] = m[k] * b1 + (1 - b1) * g;
    v[k] = v[k] * b2 + (1 - b2) * g * g;
    const double denom = std::sqrt(v[k]) / bias_correction2_sqrt + eps;
    w.data[k] = p + (-step_size * m[k]) / denom;  // param.addcdiv_(exp_avg, denom, value=-step_size)
  }
}

double learning_rate(const OptimizerOptions& options, std::size_t step, std::size_t total, std::size_t d_model) {
  const double s = static_cast<double>(step), warmup = static_cast<double>(options.warmup);
  switch (options.schedule) {
    case ScheduleKind::Noam:
      // the paper's lrate = d_model^-0.5 · min(step^-0.5, step · warmup_steps^-1.5)
      return options.lr * std::pow(static_cast<double>(d_model), -0.5) *
             std::min(std::pow(s, -0.5), s * std::pow(warmup, -1.5));
    case ScheduleKind::Cosine:
      if (step <= options.warmup) return options.lr * s / warmup;
      return options.lr * 0.5 * (1 + std::cos(kPi * (s - 1 - warmup) / (static_cast<double>(total) - warmup)));
    case ScheduleKind::Constant:
      break;
  }
  if (step <= options.warmup) return options.lr * s / warmup;
  return options.lr;
}

double gradient_norm(const std::vector<Tensor>& gradients) {
  // torch.norm(torch.stack([torch.norm(g) for g in grads])): each weight's norm, then theirs
  double total = 0;
  for (const Tensor& g : gradients) {
    double sum = 0;
    for (double x : g.data) sum += x * x;
    const double norm = std::sqrt(sum);
    total += norm * norm;
  }
  return std::sqrt(total);
}

double clip_gradients(std::vector<Tensor>& gradients, double max_norm) {
  const double norm = gradient_norm(gradients);
  const double coefficient = std::min(max_norm / (norm + 1e-6), 1.0);
  for (Tensor& g : gradients)
    for (double& x : g.data) x *= coefficient;
  return norm;
}

}  // namespace attn
