// Training (attn train, docs/training.md): the data, the loop and its reports. Every weight
// of a model is learned by gradient descent on the loss attn grad differentiates (the
// cross-entropy of input.labels, or sum(output ⊙ output_grad)), with PyTorch's optimizers.
#ifndef ATTN_TRAIN_H_
#define ATTN_TRAIN_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/model_file.h"
#include "attn/run_input.h"
#include "attn/tensor.h"

namespace attn {

enum class OptimizerKind { SGD, Adam, AdamW };
enum class ScheduleKind { Constant, Cosine, Noam };

// torch.optim's hyper-parameters, with its defaults.
struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::Adam;
  double lr = 1e-3;
  double weight_decay = 0;  // L2 added to the gradient (SGD, Adam); decoupled (AdamW)
  double momentum = 0;      // SGD only
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  ScheduleKind schedule = ScheduleKind::Constant;
  std::size_t warmup = 0;  // updates of linear warmup (noam: its warmup_steps)
};

// One example: one line of a data file (JSON Lines), the keys of a model file's "input"
// for a single sequence (docs/training.md).
struct Example {
  std::size_t line = 0;             // 1 for the file's first line
  std::vector<std::string> source;  // tokens (text split as the tokenize step splits it)
  std::vector<std::string> target;  // the decoder's tokens, when given as text or tokens
  Tensor x, target_x;               // (S,N) and (T,N), when given as numbers
  std::vector<std::size_t> labels;  // a token id per output position, <PAD> where nothing is learned
  Tensor output_grad;               // (L,W), for a model without an output head
};

struct Dataset {
  std::string source;  // the file, for messages
  std::vector<Example> examples;
  std::size_t max_source = 0, max_target = 0;  // the longest sequences, for the memory estimate
  std::uint64_t bytes = 0;                     // about what the examples hold
};

// The examples of a JSON Lines file (empty lines skipped), each read as a model file's input
// is read against `model` (its vocabulary, its decoder, its output head): InputError naming
// "FILE:LINE" and the key for a bad one. Every example needs the loss's labels (or
// output_grad); examples of different lengths need <PAD> in the vocabulary. The examples are
// counted as they are read: InputError at the line where they pass `load`'s memory limit
// (a line's own X is checked before it is drawn), so that a huge file is refused, not read.
// The file is read line by line ("-": standard input), never whole: a line holding a NUL
// byte, or longer than 16 MiB or than what the limit has left, is refused as it is read.
Dataset read_dataset(const std::string& path, const Model& model, const LoadOptions& load = {});
Dataset parse_dataset(const std::string& text, const std::string& source, const Model& model,
                      const LoadOptions& load = {});

// The order of the examples in epoch `epoch` (0 first): the file's order without shuffling,
// else NumPy's np.random.permutation(n), the epochs drawn one after another from
// np.random.seed(seed). A TrainOptions' batches are consecutive runs of batch_size in it,
// the last of an epoch shorter when batch_size does not divide n.
class BatchOrder {
 public:
  BatchOrder(std::size_t examples, std::size_t batch_size, bool shuffle, std::uint32_t seed);
  // The examples of the next batch.
  std::vector<std::size_t> next();
  std::size_t batches_per_epoch() const { return (n_ + batch_ - 1) / batch_; }

 private:
  std::size_t n_, batch_;
  bool shuffle_;
  std::vector<std::size_t> order_;
  std::size_t at_ = 0;
  struct Stream;
  std::shared_ptr<Stream> stream_;
};

// The examples `batch` of `data` as one run's input (source, target, labels or
// output_grad), padded with <PAD> to the longest: what one training step or evaluation runs.
RunInput batch_input(const Model& model, const Dataset& data, const std::vector<std::size_t>& batch);

struct TrainOptions {
  std::size_t steps = 0;
  std::size_t batch_size = 32;
  OptimizerOptions optimizer;
  double clip = 0;  // max global gradient norm (clip_grad_norm_); 0: no clipping
  std::uint32_t seed = 0;
  bool shuffle = true;
  std::size_t eval_every = 0;  // 0: evaluate at the end only
};

// What one update did.
struct StepReport {
  std::size_t step = 0, total = 0;
  double loss = 0, lr = 0, grad_norm = 0;  // the loss before the update; the norm before clipping
  std::size_t correct = 0, counted = 0;    // labeled positions whose most probable token is the label
};

// A held-out set's figures: the mean loss over every labeled position, and exact match: the
// examples whose every labeled position's most probable token is its label, which is
// exactly when greedy decoding from <BOS> writes the labels, token for token.
struct EvalReport {
  double loss = 0;
  std::size_t exact = 0, examples = 0;
  std::size_t correct = 0, counted = 0;
  bool has_labels = false;
  double exact_match() const { return examples ? static_cast<double>(exact) / static_cast<double>(examples) : 0; }
};

struct TrainCallbacks {
  std::function<void(const StepReport&)> on_step;
  std::function<void(std::size_t step, const EvalReport&)> on_eval;
};

// Trains every weight of `model` for options.steps updates on `data`, evaluating `held_out`
// (when given) every eval_every steps and at the end. Returns the loss of every step.
std::vector<double> train_model(Model& model, const Dataset& data, const Dataset* held_out, const TrainOptions& options,
                                const TrainCallbacks& callbacks);

// The figures of `data` under the model as it stands, in batches of `batch_size`.
EvalReport evaluate(const Model& model, const Dataset& data, std::size_t batch_size);

// A built-in task (attn train --task NAME): its model, its seeded training and held-out
// data, and the options that train it (docs/training.md, "The tasks").
struct TrainingTask {
  std::string name;
  std::string description;  // for the trained file's comment
  Model model;
  RunInput input;  // the input its model file carries: the first held-out example
  Dataset train, held_out;
  TrainOptions options;
};
// copy, reverse, sort, translate.
const std::vector<std::string>& task_names();
// A task's model sizes other than its own (attn train --task NAME --d-model N ...); 0 keeps
// the task's.
struct TaskSizes {
  std::size_t d_model = 0, heads = 0, d_ff = 0, layers = 0;
  std::uint64_t max_memory_bytes = 0;  // the model's training run is refused above it (0: the default limit)
};
// InputError for a name that is not a task.
TrainingTask make_task(const std::string& name, const TaskSizes& sizes = {});

// The memory a training run is estimated to need, in bytes: the forward and backward of the
// largest batch, the weights, their gradients and the optimizer's state.
// With `held_out`, its evaluation batches and its examples are counted too.
std::uint64_t estimate_training_bytes(const Model& model, const Dataset& data, const TrainOptions& options,
                                      const Dataset* held_out = nullptr);

}  // namespace attn

#endif  // ATTN_TRAIN_H_
