// The option groups, each declared once and registered by the subcommands that take it:
// which model (ModelChoice: TEXT, --target, -c, --example, --model), how it is read
// (ReadingChoice: --max-memory, --lens, --answer, --ablate), how tokens are sampled (SamplingChoice),
// where the results go (OutputChoice: --dump, --html, --quiet, ...), how the walkthrough
// prints (PrintChoice: --precision, --color, ...) and which steps it shows (StepChoice:
// --steps, --layer, --cell, ...). The first three are the session's own structs
// (session/session.h, session/generation.h): the command line fills them and hands them
// over. A group's options are registered in the order --help has always listed them; where
// a subcommand describes an option in its own words, the words are given.
#ifndef ATTN_CLI_OPTION_GROUPS_H_
#define ATTN_CLI_OPTION_GROUPS_H_

#include <cstddef>
#include <string>

#include <CLI/CLI.hpp>

#include "attn/walkthrough.h"
#include "session/generation.h"
#include "session/session.h"

namespace attn::cli {

// Where a run's results go.
struct OutputChoice {
  std::string dump_path;                   // --dump FILE, "-" for stdout
  std::string json_non_finite = "string";  // --json-nonfinite: string | null | literal
  std::string dump_parameters = "auto";    // --dump-parameters: auto | yes | no
  std::string html_path;                   // --html FILE: the walkthrough as a web page
  bool quiet = false;                      // no walkthrough
  bool timings = false;                    // --timings: load, forward and dump times on stderr

  bool dump_to_stdout() const { return dump_path == "-"; }
  // Whether an output reads the run's records (and grad's gradients) once the run is done,
  // so the trace keeps them: a dump to stdout (written once the run has succeeded) or the
  // lesson page (drawn at the end). A dump to a file takes each record as it is made.
  bool outputs_read_records_after() const { return dump_to_stdout() || !html_path.empty(); }
};

// How the walkthrough prints.
struct PrintChoice {
  int precision = 4;
  std::size_t line_width = 0;  // 0: the terminal's width, or NumPy's 75 when not a terminal
  std::size_t threshold = 1000;
  bool brief = false;                              // no "why" explanations
  bool full = false;                               // every step in full, vocabulary-sized tensors whole
  std::size_t top_k = WalkthroughOptions{}.top_k;  // --top K: vocabulary-sized rows as their K largest
  std::string color = "auto";                      // auto | always | never
  std::string heatmap = "auto";                    // auto | color | shade | ascii
  bool list_only = false;                          // attn steps: titles, formulas and shapes only
};

// Which steps the walkthrough shows, and how the learner moves through them.
struct StepChoice {
  std::string cell;    // --cell b,h,i,j: the element worked out in full
  std::string steps;   // --steps 5-9,softmax
  std::string layer;   // --layer 1 | encoder.1 | decoder.0
  int head = -1;       // --head h
  int batch = -1;      // --batch b
  bool pause = false;  // one step at a time: Enter, b, a step number, q
};

// -c, --example and --model (which excludes the other two), in each subcommand's words.
struct ModelSourceHelp {
  const char* config;
  const char* example;
  bool checkpoint = true;  // --model too
};
extern const ModelSourceHelp kExplainModelSource;  // -c reads standard input too
extern const ModelSourceHelp kGenerateModelSource;
void add_model_source(CLI::App& command, ModelChoice& model, const ModelSourceHelp& help);
// explain's, steps' and grad's: TEXT, --target, the model's source and --max-memory.
void add_model_options(CLI::App& command, ModelChoice& model, ReadingChoice& reading);

// --max-memory into `gib` (a ReadingChoice's, or a command's own), described by `help`
// (explain's words when null): every subcommand that takes it.
void add_memory_option(CLI::App& command, double& gib, const char* help = nullptr);
// --ablate and --ablate-mean, and --lens and --answer when `with_lens` (docs/heads.md).
void add_reading_options(CLI::App& command, ReadingChoice& reading, bool with_lens);

// --temperature, --top-k, --top-p, --seed.
void add_sampling_options(CLI::App& command, SamplingChoice& sampling);

// explain's and grad's outputs and walkthrough: --dump, --json-nonfinite, --dump-parameters,
// --html (when `with_html`), the printing, --quiet, --timings, and the steps shown.
void add_walkthrough_options(CLI::App& command, OutputChoice& output, PrintChoice& print, StepChoice& steps,
                             bool with_html);
// --color, as every walkthrough takes it.
void add_color_option(CLI::App& command, PrintChoice& print);

// Registers `run` as the subcommand's callback: its exit code, when not 0, ends the parse.
template <typename Options, typename Run>
void run_on_parse(CLI::App& command, Options& options, Run run) {
  command.callback([&options, run]() {
    const int code = run(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace attn::cli

#endif  // ATTN_CLI_OPTION_GROUPS_H_
