// `attn generate`: continue a text (decoder-only) or translate one (encoder-decoder), one
// token at a time with a KV cache, greedy or sampled.
#ifndef ATTN_CLI_GENERATE_COMMAND_H_
#define ATTN_CLI_GENERATE_COMMAND_H_

#include <CLI/CLI.hpp>

#include "option_groups.h"
#include "session/beam_search.h"

namespace attn::cli {

struct GenerateOptions {
  ModelChoice model;        // the model and the text
  ReadingChoice reading;    // --max-memory, --ablate
  SamplingChoice sampling;  // --temperature, --top-k, --top-p, --seed
  StopRules rules;          // -n, --stop, --no-cache
  BeamRules beams;          // --beams, --length-penalty, --early-stopping
  OutputChoice output;      // --dump, --html, --quiet
  PrintChoice print;        // --brief, --precision, --top, --color
  bool json = false;        // --json: {"ids": [...], "text": "..."} alone on standard output
};

void setup_generate(CLI::App& app, GenerateOptions& options);
int run_generate(const GenerateOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_GENERATE_COMMAND_H_
