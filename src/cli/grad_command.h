// `attn grad`: run a model forward, compute its loss, then run the backward pass and walk
// through every gradient (docs/cli.md, docs/backward.md).
#ifndef ATTN_CLI_GRAD_COMMAND_H_
#define ATTN_CLI_GRAD_COMMAND_H_

#include <string>

#include <CLI/CLI.hpp>

#include "option_groups.h"

namespace attn::cli {

struct GradOptions {
  ModelChoice model;      // the model and the input, as explain's
  ReadingChoice reading;  // --max-memory, --ablate
  OutputChoice output;    // the dump, the lesson, --quiet, --timings
  PrintChoice print;      // the walkthrough, as explain's
  StepChoice steps;
  std::string labels;  // --labels: the loss's labels, replacing the file's
};

void setup_grad(CLI::App& app, GradOptions& options);
// Returns the process exit code; throws attn::InputError for bad input (a model without
// labels or output_grad among them).
int run_grad(const GradOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_GRAD_COMMAND_H_
