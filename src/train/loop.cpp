// The training loop: batch, forward, loss, backward, clip, update; and the held-out figures.
#include <algorithm>
#include <cmath>

#include "attn/backward.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/parameters.h"
#include "attn/train.h"
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

// One forward and backward pass of the batch the model holds: the loss, and dL/dw for every
// weight in parameters() order.
struct Gradients {
  double loss = 0;
  std::vector<Tensor> weights;
  Accuracy accuracy;
};
Gradients forward_backward(const Model& model) {
  Trace trace(false);
  const Tensor output = run_model(model, trace);
  Gradients g;
  g.loss = run_backward(model, trace);
  if (model.output.present) g.accuracy = accuracy(output, model.labels, model.vocab.pad_id());
  for (TraceEntry& e : trace.take_entries())
    if (e.id.gradient && e.id.kind == StepKind::Weight) g.weights.push_back(std::move(e.tensor));
  return g;
}

// The input the model holds (the file's example), put back when training or evaluating,
// which set batch after batch in its place, ends.
class KeepInput {
 public:
  explicit KeepInput(Model& model)
      : model_(model),
        batched_(model.batched),
        target_batched_(model.target_input_batched),
        input_(model.input),
        target_input_(model.target_input),
        labels_(model.labels),
        output_grad_(model.output_grad),
        source_(model.source_tokens),
        target_(model.target_tokens) {}
  ~KeepInput() {
    model_.batched = batched_;
    model_.target_input_batched = target_batched_;
    model_.input = std::move(input_);
    model_.target_input = std::move(target_input_);
    model_.labels = std::move(labels_);
    model_.output_grad = std::move(output_grad_);
    model_.source_tokens = std::move(source_);
    model_.target_tokens = std::move(target_);
  }
  KeepInput(const KeepInput&) = delete;
  KeepInput& operator=(const KeepInput&) = delete;

 private:
  Model& model_;
  bool batched_, target_batched_;
  Tensor input_, target_input_, labels_, output_grad_;
  TokenInput source_, target_;
};

}  // namespace

std::vector<double> train_model(Model& model, const Dataset& data, const Dataset* held_out, const TrainOptions& options,
                                const TrainCallbacks& callbacks) {
  KeepInput keep(model);
  Optimizer optimizer(options.optimizer, parameters(model));
  const bool per_head = has_per_head_weights(model);
  BatchOrder order(data.examples.size(), options.batch_size, options.shuffle, options.seed);
  std::vector<double> losses;
  for (std::size_t step = 1; step <= options.steps; ++step) {
    set_batch(model, data, order.next());
    Gradients g = forward_backward(model);
    StepReport report;
    report.step = step;
    report.total = options.steps;
    report.loss = g.loss;
    report.lr = learning_rate(options.optimizer, step, options.steps, model.config.d_model);
    report.grad_norm = options.clip > 0 ? clip_gradients(g.weights, options.clip) : gradient_norm(g.weights);
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

EvalReport evaluate(Model& model, const Dataset& data, std::size_t batch_size) {
  KeepInput keep(model);
  EvalReport report;
  double loss_sum = 0;
  std::size_t loss_weight = 0;
  for (std::size_t at = 0; at < data.examples.size(); at += batch_size) {
    std::vector<std::size_t> batch;
    for (std::size_t i = at; i < std::min(at + batch_size, data.examples.size()); ++i) batch.push_back(i);
    set_batch(model, data, batch);
    Tensor logits;
    Trace trace(false);
    trace.keep_entries(false);
    trace.set_sink([&](const TraceRecord& r) {
      if (r.id.kind != StepKind::Logits) return;
      logits = Tensor::uninitialized(r.shape, r.axes);
      std::copy(r.data, r.data + logits.size(), logits.data.begin());
    });
    const Tensor output = run_model(model, trace);
    report.examples += batch.size();
    if (!model.output.present) {
      const double loss = output_grad_loss(output, model.output_grad);
      loss_sum += loss;
      loss_weight += 1;
      continue;
    }
    report.has_labels = true;
    const auto pad = model.vocab.pad_id();
    const std::size_t n = counted_labels(model.labels, pad);
    loss_sum += cross_entropy(logits, model.labels, pad) * static_cast<double>(n);
    loss_weight += n;
    const Accuracy a = accuracy(output, model.labels, pad);
    report.correct += a.correct;
    report.counted += a.counted;
    report.exact += a.exact;
  }
  report.loss = loss_weight ? loss_sum / static_cast<double>(loss_weight) : 0;
  return report;
}

std::uint64_t estimate_training_bytes(const Model& model, const Dataset& data, const TrainOptions& options) {
  RunSize size = run_size_of(model);
  size.batch = std::min(options.batch_size, data.examples.size());
  size.seq_len = data.max_source;
  size.target_len = model.has_target() ? data.max_target : 0;
  size.trace_kept = true;
  size.backward = true;
  const std::uint64_t run = estimate_run_bytes(model.config, size);
  const std::uint64_t weights = parameter_count(model);
  // the gradients (counted by the run's estimate), the optimizer's state
  return run + Optimizer::state_bytes(options.optimizer, weights);
}

}  // namespace attn
