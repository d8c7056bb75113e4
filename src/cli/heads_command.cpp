#include "heads_command.h"

#include <chrono>
#include <iostream>
#include <memory>

#include <unistd.h>

#include "attn/model_file.h"
#include "command_run.h"
#include "forward/ablation.h"
#include "present/print_heads.h"
#include "present/progress.h"
#include "present/terminal.h"
#include "session/comparison_runs.h"
#include "session/head_scores_run.h"
#include "validators.h"

namespace attn::cli {

void setup_heads(CLI::App& app, HeadsOptions& options) {
  CLI::App* heads = app.add_subcommand(
      "heads",
      "Measure what every attention head does on one sequence: previous-token, first-token, induction, "
      "duplicate-token and self scores (docs/heads.md)");
  heads
      ->add_option("text", options.model.text,
                   "The sequence to measure on; default: a random segment of the vocabulary, twice")
      ->check(values_from(ValueList::FreeText));
  add_model_source(*heads, options.model,
                   {kGenerateModelSource.config, "A bundled example (list them with 'attn examples')"});
  heads->add_flag("--json", options.json, "Every score of every head as JSON, on stdout");
  add_memory_option(*heads, options.reading.max_memory_gib);
  heads->add_option("--seed", options.seed, "Without TEXT: the random sequence's np.random.seed")
      ->transform(seed_number())
      ->capture_default_str();
  add_reading_options(*heads, options.reading, /*with_lens=*/false);
  run_on_parse(*heads, options, run_heads);
}

namespace {

// The run as the scores read it: its attention weights kept, beside the unablated run's
// probabilities with --ablate (`ablation`).
RunPlan heads_plan(const ReadingChoice& reading, const Ablation& ablation) {
  RunPlan plan;
  plan.kept = RunPlan::Kept::AttentionWeights;
  if (!reading.ablate.empty()) {
    plan.ablation = &ablation;
    plan.unablated_run = true;
  }
  return plan;
}

}  // namespace

int run_heads(const HeadsOptions& options) {
  LoadOptions load;
  load.trace_kept = false;  // the scores read the attention weights alone (attention_records)
  load.ablation = !options.reading.ablate.empty();
  load.weights_as_stored = true;  // the heads are scored from the forward pass alone
  const auto session = open_session(options.model, options.reading, "", false, load, /*text_optional=*/true);
  if (options.model.text.empty()) use_repeated_sequence(*session, options.seed);
  check_one_sequence(*session);
  // estimated with the target it can grow to
  const Ablation ablation = options.reading.ablate.empty()
                                ? Ablation{}
                                : parse_ablation(options.reading.ablate, options.reading.ablate_mean, session->model());
  session->grow_target(heads_plan(options.reading, ablation));
  // --ablate: the heads' scores and the probabilities of the ablated run, beside the
  // unablated run's probabilities (the target above is the unablated model's own).
  Tensor unablated;
  if (!options.reading.ablate.empty()) {
    unablated = unablated_probabilities(*session);
    session->apply_reading();
  }
  // On a terminal's stderr, the run's progress by layer (a big model's long text takes a while).
  std::unique_ptr<ProgressLine> progress;
  const Model& model = session->model();
  if (::isatty(STDERR_FILENO))
    progress = std::make_unique<ProgressLine>(std::cerr, model.encoder.size(), model.decoder.size());
  const auto started = std::chrono::steady_clock::now();
  const HeadsReport report = measure_heads(*session, unablated, [&progress, started](const TraceRecord& r) {
    if (progress) progress->update(r.id, 0, seconds_since(started));
  });
  if (progress) progress->clear();
  // Every line fits the terminal: the window's width, else COLUMNS, else 80.
  const std::size_t width =
      ::isatty(STDOUT_FILENO) || read_terminal_environment().columns ? terminal_width(STDOUT_FILENO) : 80;
  if (options.json)
    print_heads_json(std::cout, model, report);
  else
    print_heads_report(std::cout, model, session->source_name(), report, width);
  return 0;
}

}  // namespace attn::cli
