// `attn examples`: list the bundled examples (run one with `attn explain --example NAME`).
#ifndef ATTN_CLI_EXAMPLES_COMMAND_H_
#define ATTN_CLI_EXAMPLES_COMMAND_H_

#include <CLI/CLI.hpp>

namespace attn::cli {

void setup_examples(CLI::App& app);
int run_examples();

}  // namespace attn::cli

#endif  // ATTN_CLI_EXAMPLES_COMMAND_H_
