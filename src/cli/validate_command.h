// `attn validate FILE...`: check model files without running them; report every problem.
#ifndef ATTN_CLI_VALIDATE_COMMAND_H_
#define ATTN_CLI_VALIDATE_COMMAND_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace attn::cli {

struct ValidateOptions {
  std::vector<std::string> files;
  std::vector<std::string> checkpoints;  // --model DIR|NAME, repeatable
  double max_memory_gib = 0;
};

void setup_validate(CLI::App& app, ValidateOptions& options);
// 0 when every file is valid (a summary line each on stdout), 2 when any is not (every
// problem on stderr, one line each).
int run_validate(const ValidateOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_VALIDATE_COMMAND_H_
