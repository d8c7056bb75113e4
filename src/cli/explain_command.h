// `attn explain`: run a model and walk through every step.
#ifndef ATTN_CLI_EXPLAIN_COMMAND_H_
#define ATTN_CLI_EXPLAIN_COMMAND_H_

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "attn/model.h"
#include "attn/model_file.h"

namespace attn::cli {

struct ExplainOptions {
  std::string text;        // the sentence to run (models with a vocabulary)
  std::string target;      // --target: the decoder's input sentence
  std::string model_file;  // -c FILE; empty: the built-in default model
  std::string example;     // --example NAME: a bundled example instead of a file
  std::string dump_path;   // --dump FILE, "-" for stdout
  std::string html_path;   // --html FILE: the walkthrough as a web page
  int precision = 4;
  std::size_t line_width = 0;  // 0: the terminal's width, or NumPy's 75 when not a terminal
  std::size_t threshold = 1000;
  bool quiet = false;
  bool timings = false;       // --timings: load, forward and dump times on stderr
  double max_memory_gib = 0;  // 0: half the machine's memory
  // Teaching controls.
  bool brief = false;            // no "why" explanations
  std::string cell;              // --cell b,h,i,j: the element worked out in full
  std::string steps;             // --steps 5-9,softmax
  std::string layer;             // --layer 1 | encoder.1 | decoder.0
  int head = -1;                 // --head h
  int batch = -1;                // --batch b
  bool pause = false;            // one step at a time: Enter, b, a step number, q
  bool full = false;             // every step in full, vocabulary-sized tensors whole
  std::size_t top_k = 5;         // --top K: vocabulary-sized rows as their K largest
  std::string color = "auto";    // auto | always | never
  std::string heatmap = "auto";  // auto | color | shade | ascii
  bool list_only = false;        // attn steps: titles, formulas and shapes only
};

void setup_explain(CLI::App& app, ExplainOptions& options);
// The options explain and steps share: which model and which input.
void add_model_options(CLI::App& command, ExplainOptions& options);
// How the model is loaded: the memory limit, and whether the whole trace is kept.
LoadOptions load_options(const ExplainOptions& options);
// The model the options name (a file, an example or the built-in one), with the command
// line's sentences.
Model load_run_model(const ExplainOptions& options, const LoadOptions& load);
// Returns the process exit code; throws attn::InputError for bad input.
int run_explain(const ExplainOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_EXPLAIN_COMMAND_H_
