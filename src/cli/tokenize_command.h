// `attn tokenize --model DIR TEXT`: the ids and pieces a model's own tokenizer makes of a
// text (tokenizer.json, or vocab.json + merges.txt, in DIR; DIR may be a Hub name found in
// huggingface_hub's cache); --json prints
// {"ids": [...], "tokens": [...]}; TEXT "-" reads standard input.
#ifndef ATTN_CLI_TOKENIZE_COMMAND_H_
#define ATTN_CLI_TOKENIZE_COMMAND_H_

#include <string>

#include <CLI/CLI.hpp>

namespace attn::cli {

struct TokenizeOptions {
  std::string model;
  std::string text;
  bool json = false;
  bool no_special_tokens = false;
  double max_memory_gib = 0;  // 0: half the machine's memory
};

void setup_tokenize(CLI::App& app, TokenizeOptions& options);
int run_tokenize(const TokenizeOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_TOKENIZE_COMMAND_H_
