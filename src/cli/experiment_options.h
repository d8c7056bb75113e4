// What attn patch and attn attribute share: the model (-c, --example, --model), the text, the
// answer and the wrong token, --json, --max-memory; the session they open; and the metric
// they name, checked.
#ifndef ATTN_CLI_EXPERIMENT_OPTIONS_H_
#define ATTN_CLI_EXPERIMENT_OPTIONS_H_

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "attn/experiments.h"
#include "option_groups.h"
#include "session/session.h"

namespace attn::cli {

struct ExperimentOptions {
  ModelChoice model;      // the text (the clean text), --target, -c, --example, --model
  ReadingChoice reading;  // --max-memory
  std::string answer, wrong;
  bool json = false;
};

// -c, --example, --model, --answer, --wrong, --json, --max-memory; `text_option` names how the
// text is given ("--clean" for attn patch, "" for a positional TEXT).
void add_experiment_options(CLI::App& command, ExperimentOptions& options, const char* text_option);
// The session: the model and its input with the text; the decoder's target, when it has one,
// written by the model itself from the text when not given. The matrices of a checkpoint stay
// as stored, widened as the products pack them (not kept twice).
std::unique_ptr<Session> open_experiment_session(const ExperimentOptions& options);
// --answer and --wrong as tokens of the model's vocabulary (InputError otherwise).
Metric experiment_metric(const ExperimentOptions& options, const Model& model);

}  // namespace attn::cli

#endif  // ATTN_CLI_EXPERIMENT_OPTIONS_H_
