// `attn heads`: what every attention head does, measured on one sequence (docs/heads.md):
// previous-token, first-token, induction, duplicate-token and self scores, and each head's
// strongest role, as a table of layers by heads or as JSON.
#ifndef ATTN_CLI_HEADS_COMMAND_H_
#define ATTN_CLI_HEADS_COMMAND_H_

#include <cstdint>

#include <CLI/CLI.hpp>

#include "option_groups.h"

namespace attn::cli {

struct HeadsOptions {
  ModelChoice model;      // the model and the text
  ReadingChoice reading;  // --max-memory, --ablate
  bool json = false;
  std::uint32_t seed = 0;  // the random repeated sequence's np.random.seed, without TEXT
};

void setup_heads(CLI::App& app, HeadsOptions& options);
int run_heads(const HeadsOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_HEADS_COMMAND_H_
