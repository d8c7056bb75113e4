// `attn generate`: continue a text (decoder-only) or translate one (encoder-decoder), one
// token at a time with a KV cache, greedy or sampled.
#ifndef ATTN_CLI_GENERATE_COMMAND_H_
#define ATTN_CLI_GENERATE_COMMAND_H_

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "explain_command.h"

namespace attn::cli {

struct GenerateOptions {
  ExplainOptions run;  // the model, the text, the dump, the walkthrough's options
  std::size_t max_new_tokens = 20;
  double temperature = 0;
  std::size_t top_k = 0;
  double top_p = 1;
  std::uint32_t seed = 0;
  std::string stop = Vocabulary::kEnd;  // --stop TOKEN: the word vocabulary's end token by default
  bool no_cache = false;                // --no-cache: a full pass over the prefix for every token (bench/generate)
  bool json = false;                    // --json: {"ids": [...], "text": "..."} alone on standard output
};

void setup_generate(CLI::App& app, GenerateOptions& options);
int run_generate(const GenerateOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_GENERATE_COMMAND_H_
