#include "explain_command.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>

#include "attn/default_model.h"
#include "attn/error.h"
#include "attn/examples.h"
#include "attn/forward.h"
#include "attn/model_loader.h"
#include "attn/tokenizer.h"
#include "attn/trace_dump.h"
#include "attn/walkthrough.h"

namespace attn::cli {

namespace {

std::size_t terminal_width() {
  if (::isatty(STDOUT_FILENO)) {
    struct winsize ws {};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  }
  return 75;  // NumPy's default line width
}

}  // namespace

void setup_explain(CLI::App& app, ExplainOptions& options) {
  CLI::App* explain = app.add_subcommand(
      "explain", "Run a model and show every step of attention: formula, shapes on both sides, and the numbers");
  explain->add_option("text", options.text, "Sentence to run (replaces the model file's input text)");
  explain->add_option("-t,--target", options.target,
                      "Target sentence for the decoder (replaces the model file's target; needs a model with a decoder)");
  explain->add_option("-c,--config", options.model_file, "Model file (JSON, see docs/model-file.md); default: built-in model");
  explain->add_option("-e,--example", options.example, "Run a bundled example (list them with 'attn examples')")
      ->excludes("--config");
  explain->add_option("--dump", options.dump_path,
                      "Write every intermediate tensor as JSON to FILE ('-' for stdout); written whole or not at all");
  explain->add_option("--precision", options.precision, "Digits after the point when printing tensors")
      ->check(CLI::Range(0, 17))
      ->capture_default_str();
  explain->add_option("--linewidth", options.line_width,
                      "Wrap printed arrays at this many columns (default: terminal width, 75 when piped)")
      ->check(CLI::Range(20, 100000));
  explain->add_option("--threshold", options.threshold,
                      "Summarize tensors with more elements than this with '...' (NumPy's threshold)")
      ->capture_default_str();
  explain->add_flag("-q,--quiet", options.quiet, "Print no walkthrough (use with --dump)");
  explain->add_option("--max-memory", options.max_memory_gib,
                      "Refuse runs estimated to need more than this many GiB (default: half the machine's memory)")
      ->check(CLI::Validator(
          [](const std::string& v) { return std::strtod(v.c_str(), nullptr) > 0 ? std::string() : "expected a number of GiB > 0, found " + v; },
          "GiB > 0"));
  explain->callback([&options]() {
    const int code = run_explain(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

int run_explain(const ExplainOptions& options) {
  LoadOptions load;
  if (options.max_memory_gib > 0) load.max_memory_bytes = static_cast<std::uint64_t>(options.max_memory_gib * 1073741824.0);
  Model model;
  if (!options.example.empty()) {
    const BundledExample& example = find_example(options.example);
    model = load_model_text(example.json, std::string("example ") + example.name, load);
  } else {
    model = options.model_file.empty() ? load_model_text(default_model_json(), kDefaultModelSource, load)
                                       : load_model_file(options.model_file, load);
  }
  if (!options.text.empty()) replace_source_text(model, options.text, "text (command line)");
  if (!options.target.empty()) replace_target_text(model, options.target, "--target (command line)");
  Trace trace(!model.batched);
  run_model(model, trace);

  if (!options.dump_path.empty()) write_trace_json_file(options.dump_path, trace, model);
  if (options.quiet) {
    // The notes still matter without the walkthrough: an unknown word, a fully masked row.
    for (const auto& w : trace.warnings()) std::cerr << "note: " << w.name << ": " << w.message << "\n";
  } else {
    WalkthroughOptions walk;
    walk.array.precision = options.precision;
    walk.array.threshold = options.threshold;
    walk.array.line_width = options.line_width ? options.line_width : terminal_width();
    std::ostream& out = options.dump_path == "-" ? std::cerr : std::cout;
    print_walkthrough(out, trace, model, walk);
  }
  return 0;
}

}  // namespace attn::cli
