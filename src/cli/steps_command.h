// `attn steps`: every step of a run with its number, formula and shapes, no numbers:
// the map a teacher uses to pick --steps, --layer and --cell.
#ifndef ATTN_CLI_STEPS_COMMAND_H_
#define ATTN_CLI_STEPS_COMMAND_H_

#include <CLI/CLI.hpp>

#include "explain_command.h"

namespace attn::cli {

struct StepsOptions {
  ExplainOptions run;  // the model and its input, as explain's; run as a list
  bool kinds = false;  // --kinds: list the step kinds --steps accepts instead
};

void setup_steps(CLI::App& app, StepsOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_STEPS_COMMAND_H_
