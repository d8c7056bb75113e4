// `attn attribute`: direct logit attribution (docs/experiments.md): the metric at the last
// position as the sum of what each component wrote to the final residual, through the final
// norm with its scale frozen.
#ifndef ATTN_CLI_ATTRIBUTE_COMMAND_H_
#define ATTN_CLI_ATTRIBUTE_COMMAND_H_

#include <CLI/CLI.hpp>

#include "experiment_options.h"

namespace attn::cli {

void setup_attribute(CLI::App& app, ExperimentOptions& options);
int run_attribute(const ExperimentOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_ATTRIBUTE_COMMAND_H_
