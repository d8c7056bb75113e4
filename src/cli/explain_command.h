// `attn explain`: run a model and walk through every step.
#ifndef ATTN_CLI_EXPLAIN_COMMAND_H_
#define ATTN_CLI_EXPLAIN_COMMAND_H_

#include <CLI/CLI.hpp>

#include "option_groups.h"

namespace attn::cli {

// explain's options (attn steps runs explain's run too, as a list).
struct ExplainOptions {
  ModelChoice model;      // which model and which input
  ReadingChoice reading;  // --max-memory, --lens, --ablate
  OutputChoice output;    // --dump, --html, --quiet, --timings
  PrintChoice print;      // how the walkthrough prints
  StepChoice steps;       // which steps it shows
};

void setup_explain(CLI::App& app, ExplainOptions& options);
// Returns the process exit code; throws attn::InputError for bad input.
int run_explain(const ExplainOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_EXPLAIN_COMMAND_H_
