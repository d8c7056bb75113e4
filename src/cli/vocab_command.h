// `attn vocab`: the tokens a model knows (the built-in model, -c FILE or --example NAME),
// one per line with its id: what the note about unknown words points to.
#ifndef ATTN_CLI_VOCAB_COMMAND_H_
#define ATTN_CLI_VOCAB_COMMAND_H_

#include <CLI/CLI.hpp>

#include "option_groups.h"

namespace attn::cli {

struct VocabOptions {
  ModelChoice model;  // the model: -c FILE, --example NAME, or the built-in one
  bool json = false;  // --json: the tokens as one JSON array, in id order
};

void setup_vocab(CLI::App& app, VocabOptions& options);
int run_vocab(const VocabOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_VOCAB_COMMAND_H_
