#include "experiment_options.h"

#include "attn/error.h"
#include "attn/forward.h"
#include "validators.h"

namespace attn::cli {

void add_experiment_options(CLI::App& command, ExperimentOptions& options, const char* text_option) {
  ExplainOptions& model = options.model;
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
  command.add_option("-c,--config", model.model_file, "Model file (JSON, see docs/model-file.md)")
      ->check(non_empty("a file name"));
  command.add_option("-e,--example", model.example, "A bundled example (list them with 'attn examples')")
      ->excludes("--config")
      ->check(non_empty("an example name ('attn examples' lists them)"))
      ->check(values_from(ValueList::Examples));
  add_checkpoint_option(command, model);
  command.add_option("--answer", options.answer, "The answer: one token of the model's vocabulary (\" Mary\", \"f\")")
      ->required()
      ->check(values_from(ValueList::FreeText));
  command.add_option("--wrong", options.wrong, "A wrong answer: the metric is logit(answer) - logit(wrong)")
      ->check(values_from(ValueList::FreeText));
  command.add_flag("--json", options.json, "Every number as JSON, on stdout");
  command
      .add_option("--max-memory", model.max_memory_gib,
                  "Refuse runs estimated to need more than this many GiB (default: half the machine's memory)")
      ->check(memory_limit_gib());
}

LoadedModel load_experiment_model(const ExperimentOptions& options, LoadOptions& load) {
  LoadedModel loaded = load_run_model(options.model, load);
  RunInput& input = loaded.input;
  if (!input.has_tokens())
    throw InputError(model_source_name(options.model), "input",
                     "an experiment reads text, and this model's input is numbers");
  if (input.batched) throw InputError(model_source_name(options.model), "input", "expected one text, found a batch");
  if (input.target_tokens.from_bos) {
    check_run_memory(loaded.model, input, load, generated_length(input) + 1);
    extend_target_greedily(loaded.model, input, generated_length(input));
  }
  return loaded;
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
