// `attn explain`: run a model and walk through every step.
#ifndef ATTN_CLI_EXPLAIN_COMMAND_H_
#define ATTN_CLI_EXPLAIN_COMMAND_H_

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "attn/model.h"
#include "attn/model_file.h"
#include "attn/walkthrough.h"

namespace attn::cli {

struct ExplainOptions {
  std::string text;                        // the sentence to run (models with a vocabulary)
  std::string target;                      // --target: the decoder's input sentence
  std::string model_file;                  // -c FILE; empty: the built-in default model
  std::string example;                     // --example NAME: a bundled example instead of a file
  std::string checkpoint;                  // --model DIR|NAME: a Hugging Face checkpoint
  bool text_optional = false;              // attn heads: a checkpoint needs no TEXT (it makes one)
  std::string dump_path;                   // --dump FILE, "-" for stdout
  std::string json_non_finite = "string";  // --json-nonfinite: string | null | literal
  std::string dump_parameters = "auto";    // --dump-parameters: auto | yes | no
  std::string html_path;                   // --html FILE: the walkthrough as a web page
  int precision = 4;
  std::size_t line_width = 0;  // 0: the terminal's width, or NumPy's 75 when not a terminal
  std::size_t threshold = 1000;
  bool quiet = false;
  bool timings = false;       // --timings: load, forward and dump times on stderr
  double max_memory_gib = 0;  // 0: half the machine's memory
  // Teaching controls.
  bool brief = false;                              // no "why" explanations
  std::string cell;                                // --cell b,h,i,j: the element worked out in full
  std::string steps;                               // --steps 5-9,softmax
  std::string layer;                               // --layer 1 | encoder.1 | decoder.0
  int head = -1;                                   // --head h
  int batch = -1;                                  // --batch b
  bool pause = false;                              // one step at a time: Enter, b, a step number, q
  bool full = false;                               // every step in full, vocabulary-sized tensors whole
  std::size_t top_k = WalkthroughOptions{}.top_k;  // --top K: vocabulary-sized rows as their K largest
  std::string color = "auto";                      // auto | always | never
  std::string heatmap = "auto";                    // auto | color | shade | ascii
  bool list_only = false;                          // attn steps: titles, formulas and shapes only
  // Reading what the model learned (docs/heads.md).
  bool lens = false;         // --lens: the logit lens after every layer
  std::string answer;        // --answer TOKEN (with --lens): its rank, logit and probability per layer
  std::string ablate;        // --ablate L.H[,L.H...]: heads whose context is replaced
  bool ablate_mean = false;  // --ablate-mean: by its mean over positions, not zero
};

void setup_explain(CLI::App& app, ExplainOptions& options);
// --model DIR|NAME, which excludes -c and -e (given after them).
void add_checkpoint_option(CLI::App& command, ExplainOptions& options);
// The options explain and steps share: which model and which input.
void add_model_options(CLI::App& command, ExplainOptions& options);
// The options explain and grad share: the dump, printing and the teaching controls; and
// --html, for the commands that can write their walkthrough as a web page.
void add_walkthrough_options(CLI::App& command, ExplainOptions& options, bool with_html = false);
// Returns the process exit code; throws attn::InputError for bad input.
int run_explain(const ExplainOptions& options);

// What explain and grad share: the model the options name (a file, standard input, an
// example or the built-in one), with the command line's sentences; the walkthrough's
// options; the name of the model in messages ("example seed000_batched_mha", the file name).
LoadedModel load_run_model(const ExplainOptions& options, LoadOptions& load);
WalkthroughOptions walkthrough_options(const ExplainOptions& options);
// The --batch, --layer and --cell a run's walkthrough could never show: InputError before
// anything runs, naming the range the model has.
void check_selection(const WalkthroughOptions& walk, const Model& model, const RunInput& input);
// The run's model as the output names it: the folder or file escaped as error messages are
// (printable), "example NAME", or the built-in model.
std::string model_source_name(const ExplainOptions& options);
// The bytes of the model file the options name (an example's, the built-in model's), which
// loading parses whole (RunPlan::model_file_bytes); 0 for a checkpoint and standard input.
std::uint64_t model_file_bytes(const ExplainOptions& options);

}  // namespace attn::cli

#endif  // ATTN_CLI_EXPLAIN_COMMAND_H_
