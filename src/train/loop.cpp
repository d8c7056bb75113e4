// The training loop: batch, forward, loss, backward, clip, update; and the held-out figures.
#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "attn/backward.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/parameters.h"
#include "attn/step_roles.h"
#include "attn/train.h"
#include "model/memory_estimate.h"
#include "steps/loss.h"
#include "train/optimizer.h"

namespace attn {

namespace {

// The labeled positions of `probabilities` (B,T,V) whose most probable token is the label,
// and per example whether all of them are.
struct Accuracy {
  std::size_t correct = 0, counted = 0, exact = 0;
};
Accuracy accuracy(const Tensor& probabilities, const Tensor& labels, std::optional<std::size_t> ignore) {
  // probabilities (B,T,V), labels (B,T)
  Accuracy a;
  const std::size_t B = labels.shape[0], T = labels.shape[1], V = probabilities.shape[2];
  for (std::size_t b = 0; b < B; ++b) {
    bool all = true;
    for (std::size_t t = 0; t < T; ++t) {
      const auto label = static_cast<std::size_t>(labels.data[b * T + t]);
      if (ignore && label == *ignore) continue;
      const double* p = probabilities.data.data() + (b * T + t) * V;
      const auto best = static_cast<std::size_t>(std::max_element(p, p + V) - p);
      ++a.counted;
      if (best == label)
        ++a.correct;
      else
        all = false;
    }
    a.exact += all ? 1 : 0;
  }
  return a;
}

bool has_per_head_weights(const Model& model) {
  for (const ConstParameter& p : parameters(model))
    if (p.id.head >= 0) return true;
  return false;
}

// One forward and backward pass of a batch: the loss, and dL/dw for every weight in
// parameters() order.
struct Gradients {
  double loss = 0;
  std::vector<Tensor> weights;
  Accuracy accuracy;
};
Gradients forward_backward(const Model& model, const RunInput& batch) {
  Trace trace(false);
  const Tensor output = run_model(model, batch, trace);
  Gradients g;
  g.loss = run_backward(model, batch, trace);
  if (model.output.present) g.accuracy = accuracy(output, batch.labels, model.vocab.pad_id());
  for (TraceEntry& e : trace.take_entries())
    if (e.id.gradient && e.id.kind == StepKind::Weight) g.weights.push_back(std::move(e.tensor));
  return g;
}

}  // namespace

std::vector<double> train_model(Model& model, const Dataset& data, const Dataset* held_out, const TrainOptions& options,
                                const TrainCallbacks& callbacks) {
  Optimizer optimizer(options.optimizer, parameters(model));
  const bool per_head = has_per_head_weights(model);
  BatchOrder order(data.examples.size(), options.batch_size, options.shuffle, options.seed);
  std::vector<double> losses;
  for (std::size_t step = 1; step <= options.steps; ++step) {
    Gradients g = forward_backward(model, batch_input(model, data, order.next()));
    StepReport report;
    report.step = step;
    report.total = options.steps;
    report.loss = g.loss;
    report.lr = learning_rate(options.optimizer, step, options.steps, model.config.d_model);
    report.grad_norm = options.clip > 0 ? clip_gradients(g.weights, options.clip) : gradient_norm(g.weights);
    // A loss or gradient that is no longer a number would make every weight garbage: stop here.
    for (const auto& [what, value] : {std::pair{"the loss", g.loss}, std::pair{"the gradient norm", report.grad_norm}})
      if (!std::isfinite(value))
        throw TrainingStopped(
            fmt::format("update {}: {} is {}: training stopped and wrote no model (a smaller "
                        "--lr, or --clip, keeps the numbers finite)",
                        step, what, value));
    report.correct = g.accuracy.correct;
    report.counted = g.accuracy.counted;
    optimizer.step(g.weights, report.lr);
    // The forward pass reads the fused W_q, W_k, W_v made from per-head matrices.
    if (per_head) fuse_head_weights(model);
    losses.push_back(g.loss);
    if (callbacks.on_step) callbacks.on_step(report);
    const bool eval_now = step == options.steps || (options.eval_every && step % options.eval_every == 0);
    if (held_out && eval_now) {
      const EvalReport eval = evaluate(model, *held_out, std::max<std::size_t>(options.batch_size, 64));
      if (callbacks.on_eval) callbacks.on_eval(step, eval);
    }
  }
  return losses;
}

EvalReport evaluate(const Model& model, const Dataset& data, std::size_t batch_size) {
  EvalReport report;
  double loss_sum = 0;
  std::size_t loss_weight = 0;
  for (std::size_t at = 0; at < data.examples.size(); at += batch_size) {
    std::vector<std::size_t> batch;
    for (std::size_t i = at; i < std::min(at + batch_size, data.examples.size()); ++i) batch.push_back(i);
    const RunInput input = batch_input(model, data, batch);
    Tensor logits;
    Trace trace(false);
    trace.keep_entries(false);
    trace.set_sink([&](const TraceRecord& r) {
      if (!is_output_logits(r.id.kind)) return;
      logits = Tensor::uninitialized(r.shape, r.axes);
      std::copy(r.data, r.data + logits.size(), logits.data.begin());
    });
    const Tensor output = run_model(model, input, trace);
    report.examples += batch.size();
    if (!model.output.present) {
      const double loss = output_grad_loss(output, input.output_grad);
      loss_sum += loss;
      loss_weight += 1;
      continue;
    }
    report.has_labels = true;
    const auto pad = model.vocab.pad_id();
    const std::size_t n = counted_labels(input.labels, pad);
    loss_sum += cross_entropy(logits, input.labels, pad) * static_cast<double>(n);
    loss_weight += n;
    const Accuracy a = accuracy(output, input.labels, pad);
    report.correct += a.correct;
    report.counted += a.counted;
    report.exact += a.exact;
  }
  report.loss = loss_weight ? loss_sum / static_cast<double>(loss_weight) : 0;
  return report;
}

std::uint64_t estimate_training_bytes(const Model& model, const Dataset& data, const TrainOptions& options,
                                      const Dataset* held_out) {
  RunSize size;
  size.encoder_layers = model.encoder.size();
  size.decoder_layers = model.decoder.size();
  size.vocab = model.vocab.size();
  size.position_rows = model.positions.shape.empty() ? 0 : model.positions.shape[0];
  size.batch = std::min(options.batch_size, data.examples.size());
  size.seq_len = data.max_source;
  size.target_len = model.has_target() ? data.max_target : 0;
  size.trace_kept = true;
  size.backward = true;
  std::uint64_t run = estimate_run_bytes(model.config, size, block_weight_steps(model));
  if (held_out) {
    // The evaluation's batches of max(batch size, 64), forward only, one layer alive at a
    // time; the training step's tensors are freed by then.
    RunSize eval = size;
    eval.batch = std::min(std::max<std::size_t>(options.batch_size, 64), held_out->examples.size());
    eval.seq_len = held_out->max_source;
    eval.target_len = model.has_target() ? held_out->max_target : 0;
    eval.trace_kept = false;
    eval.backward = false;
    run = std::max(run, estimate_run_bytes(model.config, eval, block_weight_steps(model)));
  }
  const std::uint64_t weights = parameter_count(model);
  // the gradients (counted by the run's estimate), the optimizer's state, the examples
  const long double total = static_cast<long double>(run) + Optimizer::state_bytes(options.optimizer, weights) +
                            data.bytes + (held_out ? held_out->bytes : 0);
  return total > 1.8e19L ? UINT64_MAX : static_cast<std::uint64_t>(total);
}

}  // namespace attn
