// `attn grad`: run a model forward, compute its loss, then run the backward pass and walk
// through every gradient (docs/cli.md, docs/backward.md).
#ifndef ATTN_CLI_GRAD_COMMAND_H_
#define ATTN_CLI_GRAD_COMMAND_H_

#include <CLI/CLI.hpp>

#include "explain_command.h"

namespace attn::cli {

struct GradOptions {
  ExplainOptions run;  // the model, the input, the dump and the walkthrough, as explain's
  std::string labels;  // --labels: the loss's labels, replacing the file's
};

void setup_grad(CLI::App& app, GradOptions& options);
// Returns the process exit code; throws attn::InputError for bad input (a model without
// labels or output_grad among them).
int run_grad(const GradOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_GRAD_COMMAND_H_
