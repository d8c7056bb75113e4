// What attn patch and attn attribute share: the model (-c, --example, --model), the text, the
// answer and the wrong token, --json, --max-memory; and the metric they name, checked.
#ifndef ATTN_CLI_EXPERIMENT_OPTIONS_H_
#define ATTN_CLI_EXPERIMENT_OPTIONS_H_

#include <string>

#include <CLI/CLI.hpp>

#include "attn/experiments.h"
#include "attn/model_file.h"
#include "explain_command.h"

namespace attn::cli {

struct ExperimentOptions {
  ExplainOptions model;  // model_file, example, checkpoint, text (the clean text), max_memory_gib
  std::string answer, wrong;
  bool json = false;
};

// -c, --example, --model, --answer, --wrong, --json, --max-memory; `text_option` names how the
// text is given ("--clean" for attn patch, "" for a positional TEXT).
void add_experiment_options(CLI::App& command, ExperimentOptions& options, const char* text_option);
// The model and its input with the text; the decoder's target, when it has one, written by the
// model itself from the text when not given.
LoadedModel load_experiment_model(const ExperimentOptions& options, LoadOptions& load);
// --answer and --wrong as tokens of the model's vocabulary (InputError otherwise).
Metric experiment_metric(const ExperimentOptions& options, const Model& model);

}  // namespace attn::cli

#endif  // ATTN_CLI_EXPERIMENT_OPTIONS_H_
