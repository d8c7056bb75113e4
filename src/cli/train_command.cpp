#include "train_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/load_model.h"
#include "attn/loss_curve.h"
#include "attn/model_file.h"
#include "attn/model_writer.h"
#include "attn/product_kernel.h"
#include "attn/train.h"
#include "core/same_file.h"
#include "io/number_text.h"
#include "io/output_file.h"
#include "option_groups.h"
#include "present/terminal.h"
#include "standard_streams.h"
#include "train_report.h"
#include "validators.h"

namespace attn::cli {

namespace {

const char* const kSource = "attn train";

bool given(const TrainCommandOptions& options, const char* name) {
  return options.command && options.command->count(name) > 0;
}

// What to train and on what: a model file and data files, or a task's own.
struct Run {
  Model model;
  RunInput input;  // the input the trained file carries: the model file's, or the task's
  Dataset data;
  std::optional<Dataset> held_out;
  TrainOptions options;
  std::string description;  // what the trained file's comment says was done
};

OptimizerOptions optimizer_options(const TrainCommandOptions& o, OptimizerOptions base) {
  if (given(o, "--optimizer"))
    base.kind = o.optimizer == "sgd"     ? OptimizerKind::SGD
                : o.optimizer == "adamw" ? OptimizerKind::AdamW
                                         : OptimizerKind::Adam;
  if (given(o, "--schedule"))
    base.schedule = o.schedule == "cosine" ? ScheduleKind::Cosine
                    : o.schedule == "noam" ? ScheduleKind::Noam
                                           : ScheduleKind::Constant;
  // torch's defaults: AdamW decays by 0.01, the others not at all; noam's factor is 1
  if (given(o, "--optimizer") && !given(o, "--weight-decay"))
    base.weight_decay = base.kind == OptimizerKind::AdamW ? 0.01 : 0.0;
  if (given(o, "--schedule") && !given(o, "--lr")) base.lr = base.schedule == ScheduleKind::Noam ? 1.0 : 1e-3;
  if (given(o, "--lr")) base.lr = o.lr;
  if (given(o, "--weight-decay")) base.weight_decay = o.weight_decay;
  if (given(o, "--momentum")) base.momentum = o.momentum;
  if (given(o, "--warmup")) base.warmup = o.warmup;
  if (base.momentum != 0 && base.kind != OptimizerKind::SGD)
    throw InputError(
        kSource, "--momentum",
        "only SGD takes a momentum: add --optimizer sgd (Adam and AdamW keep their own, torch's beta1 0.9)");
  if (base.schedule == ScheduleKind::Noam && base.warmup == 0)
    throw InputError(kSource, "--warmup", "the noam schedule needs warmup steps (the paper: 4000)");
  return base;
}

// The options given on the command line replace the task's (or the defaults).
TrainOptions train_options(const TrainCommandOptions& o, TrainOptions base, std::size_t examples) {
  if (given(o, "--batch-size")) base.batch_size = o.batch_size;
  if (given(o, "--clip")) base.clip = o.clip;
  if (given(o, "--seed")) base.seed = o.seed;
  if (given(o, "--no-shuffle")) base.shuffle = false;
  if (given(o, "--eval-every")) base.eval_every = o.eval_every;
  base.optimizer = optimizer_options(o, base.optimizer);
  if (base.batch_size == 0) throw InputError(kSource, "--batch-size", "expected a positive integer, found 0");
  const std::size_t per_epoch = (examples + base.batch_size - 1) / base.batch_size;
  if (given(o, "--steps")) base.steps = o.steps;
  if (given(o, "--epochs")) {
    if (per_epoch != 0 && o.epochs > std::numeric_limits<std::size_t>::max() / per_epoch)
      throw InputError(kSource, "--epochs",
                       fmt::format("expected at most {} epochs of {} batches (a step count that fits in 64 bits), "
                                   "found {}",
                                   std::numeric_limits<std::size_t>::max() / per_epoch, per_epoch, o.epochs));
    base.steps = o.epochs * per_epoch;
  }
  if (base.steps == 0 && !given(o, "--steps") && !given(o, "--epochs")) base.steps = per_epoch;
  if (base.steps == 0)
    throw InputError(kSource, given(o, "--steps") ? "--steps" : "--epochs", "expected at least one step");
  if (base.optimizer.schedule == ScheduleKind::Cosine && base.optimizer.warmup >= base.steps)
    throw InputError(kSource, "--warmup",
                     fmt::format("expected fewer warmup steps than the {} steps of the run (cosine decays after "
                                 "the warmup)",
                                 base.steps));
  return base;
}

Run file_run(const TrainCommandOptions& o, const LoadOptions& load) {
  if (o.model_file.empty()) throw InputError(kSource, "-c", "missing: the model to train (-c FILE), or --task NAME");
  if (o.data_file.empty()) throw InputError(kSource, "--data", "missing: the training examples (--data FILE)");
  if (o.output.empty()) throw InputError(kSource, "-o", "missing: where to write the trained model (-o FILE)");
  for (const char* size : {"--d-model", "--heads", "--d-ff", "--layers"})
    if (given(o, size))
      throw InputError(kSource, size, "only with --task: a model file gives its own sizes (attn init makes one)");
  Run run;
  LoadedModel loaded = load_model(o.model_file, load);
  run.model = std::move(loaded.model);
  run.input = std::move(loaded.input);
  run.data = read_dataset(o.data_file, run.model, load);
  run.description = fmt::format("{} trained on {}", o.model_file, o.data_file);
  return run;
}

Run task_run(const TrainCommandOptions& o, const LoadOptions& load) {
  if (!o.model_file.empty() || !o.data_file.empty())
    throw InputError(kSource, "--task", "a task makes its own model and data: leave out -c and --data");
  const std::pair<const char*, std::size_t> asked[] = {
      {"--d-model", o.d_model}, {"--heads", o.heads}, {"--d-ff", o.d_ff}, {"--layers", o.layers}};
  for (const auto& [size, value] : asked)
    if (given(o, size) && value == 0)
      throw InputError(kSource, size,
                       "expected a positive integer, found 0 (leave the option out for the task's own size)");
  TaskSizes sizes;
  sizes.d_model = o.d_model;
  sizes.heads = o.heads;
  sizes.d_ff = o.d_ff;
  sizes.layers = o.layers;
  sizes.max_memory_bytes = load.max_memory_bytes;
  TrainingTask task = make_task(o.task, sizes);
  Run run;
  run.model = std::move(task.model);
  run.input = std::move(task.input);
  run.data = std::move(task.train);
  run.held_out = std::move(task.held_out);
  run.options = task.options;
  run.description = task.description;
  return run;
}

// What the run did, in words: "1500 steps of adam (lr 0.003, cosine schedule, ...)".
std::string training_text(const TrainOptions& t) {
  const OptimizerOptions& p = t.optimizer;
  const char* optimizer = p.kind == OptimizerKind::SGD ? "sgd" : p.kind == OptimizerKind::AdamW ? "adamw" : "adam";
  const char* schedule = p.schedule == ScheduleKind::Cosine ? "cosine"
                         : p.schedule == ScheduleKind::Noam ? "noam"
                                                            : "constant";
  return fmt::format("{} steps of {} (lr {}, {} schedule, warmup {}, weight decay {}{}), batches of {}, {}{}", t.steps,
                     optimizer, shortest_text(p.lr), schedule, p.warmup, shortest_text(p.weight_decay),
                     p.momentum != 0 ? ", momentum " + shortest_text(p.momentum) : "", t.batch_size,
                     t.shuffle ? fmt::format("shuffled from seed {}", t.seed) : "in file order",
                     t.clip > 0 ? ", gradients clipped to norm " + shortest_text(t.clip) : "");
}

// The command that makes the same file: attn train and every option given that changes the
// weights (not -o, --log, --force, --quiet, --curve).
std::string reproduce_command(const TrainCommandOptions& o) {
  std::string out = "attn train";
  if (!o.command) return out;
  for (const CLI::Option* opt : o.command->get_options()) {
    const std::string name = opt->get_name();
    if (opt->count() == 0 || name == "--help" || name == "--output" || name == "--log" || name == "--force" ||
        name == "--quiet" || name == "--curve" || name == "--max-memory" || name == "--eval-every")
      continue;
    out += " " + (name == "--config" ? std::string("-c") : name);
    for (const std::string& value : opt->results())
      if (name != "--no-shuffle") out += " " + value;
  }
  return out + " -o FILE";
}

std::uint64_t memory_limit_bytes(const LoadOptions& load) {
  return load.max_memory_bytes ? load.max_memory_bytes : default_memory_limit();
}

void check_memory(const Run& run, const LoadOptions& load) {
  const std::uint64_t limit = memory_limit_bytes(load);
  const std::uint64_t need =
      estimate_training_bytes(run.model, run.data, run.options, run.held_out ? &*run.held_out : nullptr);
  if (need > limit)
    throw InputError(kSource, "--batch-size",
                     fmt::format("training is estimated to need {:.1f} GiB, more than the limit of {:.1f} GiB "
                                 "(--max-memory); use smaller batches or fewer examples",
                                 static_cast<double>(need) / 1073741824.0, static_cast<double>(limit) / 1073741824.0));
}

void refuse_existing(const std::string& path, bool force) {
  struct stat st {};
  if (!force && path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
    throw InputError(path, "", "already exists; use --force to replace it");
}

// Every file train writes is another file than the others it reads or writes, whatever
// the names (./x, a link): -o over --data would replace the training data. (-o over -c is
// allowed: the model is read whole before it is replaced, as a trained model's update.)
void refuse_same_files(const TrainCommandOptions& o) {
  const std::pair<const char*, const std::string*> files[] = {
      {"-o", &o.output}, {"--log", &o.log_file}, {"--data", &o.data_file}, {"--eval", &o.eval_file}};
  if (o.output == "-" && o.log_file == "-")
    throw InputError("-o", "", "expected another file than --log's, found the same: - (standard output)");
  for (std::size_t w = 0; w < 2; ++w) {
    const std::string& written = *files[w].second;
    if (written.empty() || written == "-") continue;
    for (std::size_t other = 0; other < std::size(files); ++other)
      if (other != w && !files[other].second->empty() && same_file(written, *files[other].second))
        throw InputError(
            files[w].first, "",
            fmt::format("expected another file than {}'s, found the same: {}", files[other].first, written));
  }
}

// What train writes: the log and the model file, each made as a temporary file before the
// work and renamed into place only once everything else succeeded.
struct TrainOutputs {
  TrainLog log;
  std::unique_ptr<OutputFile> model;
};

// The summary on standard output (on standard error when -o - makes standard output the
// model alone), checked as written, then the files committed: a summary that could not be
// written (>/dev/full, a closed standard output) leaves no file behind.
void commit_outputs(const TrainCommandOptions& o, TrainOutputs& outputs, const std::string& model_json,
                    const std::string& summary) {
  const bool model_to_stdout = o.output == "-";
  if (model_to_stdout) {
    std::cerr << summary;
    outputs.model->write(model_json);
    outputs.model->commit();
    check_standard_output();
    outputs.log.commit();
    return;
  }
  std::cout << summary;
  check_standard_output();
  if (outputs.model) outputs.model->write(model_json);
  outputs.log.commit();
  if (outputs.model) outputs.model->commit();
}

// What training gives the summary: every step's loss and the last held-out report.
struct Trained {
  std::vector<double> losses;
  std::optional<EvalReport> last_eval;
};

// Trains run.model, each step logged and shown on the progress line; a step that stops
// training says at which step it stopped.
Trained train_logged(Run& run, TrainOutputs& outputs, bool quiet) {
  TrainProgress progress(!quiet && ::isatty(STDERR_FILENO));
  Trained trained;
  TrainCallbacks callbacks;
  std::size_t steps_done = 0;
  callbacks.on_step = [&](const StepReport& r) {
    steps_done = r.step;
    outputs.log.step(r);
    progress.step(r);
  };
  callbacks.on_eval = [&](std::size_t step, const EvalReport& r) {
    outputs.log.eval(step, r);
    progress.eval(r);
    trained.last_eval = r;
  };
  try {
    trained.losses = train_model(run.model, run.data, run.held_out ? &*run.held_out : nullptr, run.options, callbacks);
  } catch (const TrainingStopped& e) {
    // Training stopped itself at a value that is no longer a number, saying what helps.
    progress.clear();
    throw TrainingStopped(fmt::format("step {} of {}: {}", steps_done + 1, run.options.steps, e.what()));
  } catch (const NumericError& e) {
    // A step of the forward or backward pass overflowed: say at which step, and what helps.
    progress.clear();
    throw TrainingStopped(fmt::format("step {} of {}: {}: training diverged (try a smaller --lr, or --clip)",
                                      steps_done + 1, run.options.steps, e.what()));
  }
  progress.clear();
  return trained;
}

}  // namespace

std::string train_source_name(const TrainCommandOptions& options) {
  return options.task.empty() ? model_file_name(options.model_file) : std::string(kSource) + " --task " + options.task;
}

int run_train(const TrainCommandOptions& o) {
  refuse_same_files(o);
  // Eigen's product, whatever the CPU: the shipped trained files retrain byte for byte
  // (explain, grad and generate run the best kernel the CPU has).
  use_training_product_kernel();
  LoadOptions load;
  if (o.max_memory_gib > 0) load.max_memory_bytes = static_cast<std::uint64_t>(o.max_memory_gib * 1073741824.0);
  Run run = o.task.empty() ? file_run(o, load) : task_run(o, load);
  if (!o.eval_file.empty()) {
    // The held-out examples are read against what the training examples left of the limit.
    LoadOptions remaining = load;
    remaining.max_memory_bytes =
        std::max<std::uint64_t>(memory_limit_bytes(load) - std::min(memory_limit_bytes(load), run.data.bytes), 1);
    run.held_out = read_dataset(o.eval_file, run.model, remaining);
  }
  run.options = train_options(o, run.options, run.data.examples.size());
  check_memory(run, load);
  // Every output is checked (and its temporary file made) before the work: a folder that
  // does not exist is refused now, not after minutes of training.
  if (!o.output.empty()) refuse_existing(o.output, o.force);
  if (!o.log_file.empty()) refuse_existing(o.log_file, o.force);
  TrainOutputs outputs{
      TrainLog(o.log_file),
      // -o over -c is allowed: the model file was read whole, and is replaced by its update
      o.output.empty() ? nullptr : std::make_unique<OutputFile>(o.output, "the model file", o.model_file)};
  const std::string held_out_source = !o.eval_file.empty() ? printable(o.eval_file) : "the task's held-out set";

  const Trained trained = train_logged(run, outputs, o.quiet);
  const std::string comment =
      fmt::format("{}. Trained by '{}' (the same command writes this file again, bit for bit): {}.{}", run.description,
                  reproduce_command(o), training_text(run.options),
                  trained.last_eval && trained.last_eval->has_labels
                      ? fmt::format(" Held out: {}, loss {}.", exact_match_text(*trained.last_eval),
                                    fmt::format("{:.4f}", trained.last_eval->loss))
                      : "");
  const std::string summary = o.quiet ? std::string()
                                      : train_summary(trained.losses, trained.last_eval, held_out_source, o.curve,
                                                      std::min<std::size_t>(terminal_width(STDOUT_FILENO), 75));
  commit_outputs(o, outputs, model_file_json(run.model, run.input, comment), summary);
  return 0;
}

void setup_train(CLI::App& app, TrainCommandOptions& options) {
  CLI::App* train = app.add_subcommand(
      "train", "Learn every weight of a model from examples (or run a built-in task) and write the trained model");
  train->add_option("-c,--config", options.model_file, "The model file to train (its weights are the start)")
      ->check(non_empty("a file name"));
  train->add_option("--data", options.data_file, "Training examples, JSON Lines: one model-file input per line")
      ->check(non_empty("a file name"));
  train
      ->add_option("--task", options.task,
                   "A built-in task with its own model and data: copy, reverse, sort, translate, induction")
      ->check(CLI::IsMember(task_names()));
  train->add_option("--d-model", options.d_model, "With --task: d_model (N) instead of the task's")
      ->transform(non_negative_integer());
  train->add_option("--heads", options.heads, "With --task: number of heads, a divisor of d_model")
      ->transform(non_negative_integer());
  train->add_option("--d-ff", options.d_ff, "With --task: feed-forward width")->transform(non_negative_integer());
  train->add_option("--layers", options.layers, "With --task: layers (each stack)")->transform(non_negative_integer());
  train->add_option("-o,--output", options.output, "Write the trained model to FILE (a model file)")
      ->check(non_empty("a file name"));
  train->add_flag("-f,--force", options.force, "Replace FILE if it exists");
  train->add_option("--eval", options.eval_file, "Held-out examples: their loss and exact match, at the end")
      ->check(non_empty("a file name"));
  train->add_option("--eval-every", options.eval_every, "Also evaluate every N steps")
      ->transform(non_negative_integer());
  train->add_option("--log", options.log_file, "Write every step's loss, lr and gradient norm to FILE (JSON Lines)")
      ->check(non_empty("a file name"));
  train->add_option("--steps", options.steps, "Number of updates")->transform(non_negative_integer());
  train->add_option("--epochs", options.epochs, "Passes over the data (instead of --steps)")
      ->transform(non_negative_integer())
      ->excludes("--steps");
  train->add_option("--batch-size", options.batch_size, "Examples per update")->transform(non_negative_integer());
  train->add_option("--optimizer", options.optimizer, "sgd, adam or adamw (torch.optim's)")
      ->check(CLI::IsMember({"sgd", "adam", "adamw"}));
  train->add_option("--lr", options.lr, "Learning rate (noam: its factor, default 1)")
      ->check(finite_number(0, false, kNoBound, false, "> 0"));
  train->add_option("--weight-decay", options.weight_decay, "Weight decay (default: adamw 0.01, else 0)")
      ->check(finite_number(0, true, kNoBound, false, ">= 0"));
  train->add_option("--momentum", options.momentum, "SGD's momentum")
      ->check(finite_number(0, true, 1, true, "from 0 to 1"));
  train->add_option("--schedule", options.schedule, "Learning rate schedule: constant, cosine or noam (the paper's)")
      ->check(CLI::IsMember({"constant", "cosine", "noam"}));
  train->add_option("--warmup", options.warmup, "Steps of linear warmup")->transform(non_negative_integer());
  train->add_option("--clip", options.clip, "Clip the global gradient norm to this (clip_grad_norm_)")
      ->check(finite_number(0, false, kNoBound, false, "> 0"));
  train->add_option("--seed", options.seed, "Seed of the shuffling, as np.random.seed")->transform(seed_number());
  train->add_flag("--no-shuffle", options.no_shuffle, "Batches in file order, cycling");
  train->add_option("--curve", options.curve, "The loss curve at the end: auto, unicode, ascii or none")
      ->check(CLI::IsMember({"auto", "unicode", "ascii", "none"}));
  train->add_flag("-q,--quiet", options.quiet, "No progress line and no summary");
  add_memory_option(*train, options.max_memory_gib);
  options.command = train;
  run_on_parse(*train, options, run_train);
}

}  // namespace attn::cli
