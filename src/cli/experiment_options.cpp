#include "experiment_options.h"

#include "attn/error.h"
#include "validators.h"

namespace attn::cli {

namespace {

const ModelSourceHelp kExperimentModelSource{"Model file (JSON, see docs/model-file.md)",
                                             "A bundled example (list them with 'attn examples')"};

}  // namespace

void add_experiment_options(CLI::App& command, ExperimentOptions& options, const char* text_option) {
  ModelChoice& model = options.model;
  const std::string what = "The text to run";
  if (std::string(text_option).empty())
    command.add_option("text", model.text, what)->required()->check(values_from(ValueList::FreeText));
  else
    command.add_option(text_option, model.text, "The clean text: the run whose activations are patched in")
        ->required()
        ->check(values_from(ValueList::FreeText));
  command
      .add_option("-t,--target", model.target,
                  "Target sentence for the decoder (a model with a decoder; default: the model's own greedy one)")
      ->check(values_from(ValueList::FreeText));
  add_model_source(command, model, kExperimentModelSource);
  command.add_option("--answer", options.answer, "The answer: one token of the model's vocabulary (\" Mary\", \"f\")")
      ->required()
      ->check(values_from(ValueList::FreeText));
  command.add_option("--wrong", options.wrong, "A wrong answer: the metric is logit(answer) - logit(wrong)")
      ->check(values_from(ValueList::FreeText));
  command.add_flag("--json", options.json, "Every number as JSON, on stdout");
  add_memory_option(command, options.reading.max_memory_gib);
}

std::unique_ptr<Session> open_experiment_session(const ExperimentOptions& options) {
  LoadOptions load;
  load.trace_kept = false;
  load.weights_as_stored = true;
  auto session = std::make_unique<Session>(options.model, options.reading, load);
  const RunInput& input = session->input();
  if (!input.has_tokens())
    throw InputError(session->source_name(), "input", "an experiment reads text, and this model's input is numbers");
  if (input.batched) throw InputError(session->source_name(), "input", "expected one text, found a batch");
  session->grow_target(/*estimate=*/false);
  return session;
}

Metric experiment_metric(const ExperimentOptions& options, const Model& model) {
  Metric metric;
  metric.answer = single_token(model, options.answer, "--answer");
  metric.answer_text = options.answer;
  if (!options.wrong.empty()) {
    metric.wrong = single_token(model, options.wrong, "--wrong");
    metric.wrong_text = options.wrong;
  }
  return metric;
}

}  // namespace attn::cli
