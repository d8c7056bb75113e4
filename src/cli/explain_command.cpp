#include "explain_command.h"

#include <omp.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "attn/dump.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/walkthrough.h"
#include "html_option.h"
#include "model/default_model.h"
#include "model/examples.h"
#include "pager.h"
#include "present/progress.h"
#include "present/terminal.h"
#include "standard_streams.h"
#include "steps/tokenizer.h"
#include "validators.h"

namespace attn::cli {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Runs `work` and adds the seconds it took to `total` (the dump's and the walkthrough's
// shares of a run, which --timings leaves out of the forward pass).
template <typename F>
void timed(double& total, F&& work) {
  const auto before = std::chrono::steady_clock::now();
  work();
  total += seconds_since(before);
}

// The element --cell names: four non-negative integers b,h,i,j.
std::array<std::size_t, 4> parse_cell(const std::string& text) {
  std::array<std::size_t, 4> cell{};
  long long v[4];
  char extra = 0;
  if (std::sscanf(text.c_str(), "%lld , %lld , %lld , %lld %c", &v[0], &v[1], &v[2], &v[3], &extra) != 4 || v[0] < 0 ||
      v[1] < 0 || v[2] < 0 || v[3] < 0)
    throw InputError("--cell", "",
                     "expected four non-negative integers b,h,i,j (batch, head, row, column), found \"" + text + "\"");
  for (int k = 0; k < 4; ++k) cell[k] = static_cast<std::size_t>(v[k]);
  return cell;
}

}  // namespace

WalkthroughOptions walkthrough_options(const ExplainOptions& options) {
  WalkthroughOptions walk;
  walk.array.precision = options.precision;
  walk.array.threshold = options.threshold;
  walk.array.line_width = options.line_width ? options.line_width : terminal_width(STDOUT_FILENO);
  walk.explanations = !options.brief;
  walk.list_only = options.list_only;
  walk.full = options.full;
  walk.top_k = options.top_k;
  if (!options.cell.empty()) {
    walk.cell = parse_cell(options.cell);
    walk.cell_given = true;
  }
  if (!options.steps.empty()) walk.filter = parse_step_selection(options.steps);
  parse_layer_option(options.layer, walk.filter);
  if (options.head >= 0) walk.filter.head = static_cast<std::size_t>(options.head);
  if (options.batch >= 0) walk.filter.batch = static_cast<std::size_t>(options.batch);
  const ColorMode mode = parse_color_mode(options.color).value_or(ColorMode::Auto);
  walk.color = use_color(mode, options.dump_path == "-" ? STDERR_FILENO : STDOUT_FILENO);
  walk.color_depth = detect_color_depth();
  if (options.heatmap == "color") walk.heatmap_style = HeatmapStyle::Color;
  if (options.heatmap == "shade") walk.heatmap_style = HeatmapStyle::Shade;
  if (options.heatmap == "ascii") walk.heatmap_style = HeatmapStyle::Ascii;
  return walk;
}

// The --batch, --layer and --cell a run's walkthrough could never show: refused before
// anything runs, naming the range the model has (they used to pick nothing, silently).
void check_selection(const WalkthroughOptions& walk, const Model& model) {
  const RunSize size = run_size_of(model);
  const StepFilter& filter = walk.filter;
  if (filter.batch && !model.batched)
    throw InputError(
        "--batch", "",
        "this run's input is one sequence, not a batch: there is no batch item to pick (leave --batch out)");
  if (filter.batch && *filter.batch >= size.batch)
    throw InputError("--batch", "", fmt::format("expected an index below B={}, found {}", size.batch, *filter.batch));
  if (filter.layer) {
    const LayerSelection& l = *filter.layer;
    const std::size_t layers = !l.stack                     ? std::max(size.encoder_layers, size.decoder_layers)
                               : *l.stack == Stack::Encoder ? size.encoder_layers
                                                            : size.decoder_layers;
    const char* stack = !l.stack ? "the longer stack" : *l.stack == Stack::Encoder ? "the encoder" : "the decoder";
    if (static_cast<std::size_t>(l.layer) >= layers)
      throw InputError("--layer", "",
                       layers == 0 ? fmt::format("this model has no layers in {}", stack)
                                   : fmt::format("expected a layer below {} ({} has {} layer{}), found {}", layers,
                                                 stack, layers, layers == 1 ? "" : "s", l.layer));
  }
  if (!walk.cell_given) return;
  // Rows are positions; columns are positions (scores, weights) or features (Q's H*d,
  // d_model, the feed-forward's d_ff).
  const auto& c = model.config;
  const std::size_t B = model.batched ? size.batch : 1, rows = std::max(size.seq_len, size.target_len);
  const std::size_t columns = std::max({rows, c.d_model, c.num_heads * c.d_head, c.d_ff});
  const auto& cell = walk.cell;
  if (cell[0] >= B || cell[1] >= c.num_heads || cell[2] >= rows || cell[3] >= columns)
    throw InputError("--cell", "",
                     fmt::format("expected b,h,i,j with b < B={}, h < H={}, i < {} (positions) and j < {} (positions "
                                 "or features), found {},{},{},{}",
                                 B, c.num_heads, rows, columns, cell[0], cell[1], cell[2], cell[3]));
}

// Checks what can be checked before anything is read, then loads the model the options
// name (a file, standard input, an example or the built-in one) with the command line's
// sentences in place.
Model load_run_model(const ExplainOptions& options, LoadOptions& load) {
  const bool model_from_stdin = options.model_file == "-";
  if (model_from_stdin && options.pause)
    throw InputError("--pause", "", "waits for Enter on standard input, which -c - reads the model file from");
  if (!options.dump_path.empty())
    check_dump_target(options.dump_path, {model_from_stdin ? std::string() : options.model_file});
  if (options.max_memory_gib > 0)
    load.max_memory_bytes = static_cast<std::uint64_t>(options.max_memory_gib * 1073741824.0);
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
  return model;
}

std::string model_source_name(const ExplainOptions& options) {
  if (!options.example.empty()) return std::string("example ") + find_example(options.example).name;
  return options.model_file.empty() ? kDefaultModelSource : model_file_name(options.model_file);
}

void add_model_options(CLI::App& command, ExplainOptions& options) {
  command.add_option("text", options.text, "Sentence to run (replaces the model file's input text)")
      ->check(values_from(ValueList::FreeText));
  command
      .add_option("-t,--target", options.target,
                  "Target sentence for the decoder (replaces the model file's target; needs a model with a decoder)")
      ->check(values_from(ValueList::FreeText));
  command
      .add_option("-c,--config", options.model_file,
                  "Model file (JSON, see docs/model-file.md; - reads standard input); default: built-in model")
      ->check(non_empty("a file name"));
  command.add_option("-e,--example", options.example, "Run a bundled example (list them with 'attn examples')")
      ->excludes("--config")
      ->check(non_empty("an example name ('attn examples' lists them)"))
      ->check(values_from(ValueList::Examples));
  command
      .add_option("--max-memory", options.max_memory_gib,
                  "Refuse runs estimated to need more than this many GiB (default: half the machine's memory)")
      ->check(memory_limit_gib());
}

void add_walkthrough_options(CLI::App& explain, ExplainOptions& options, bool with_html) {
  explain
      .add_option("--dump", options.dump_path,
                  "Write every intermediate tensor to FILE as JSON, or as NumPy .npz when FILE ends in .npz "
                  "('-' for JSON on stdout); written whole or not at all")
      ->check(non_empty("a file name"));
  explain
      .add_option("--json-nonfinite", options.json_non_finite,
                  "How the JSON dump writes -inf, inf and NaN, which JSON has no number for: string (\"-Infinity\", "
                  "read by every JSON parser), null, or literal (-Infinity, as Python's json module writes it)")
      ->check(CLI::IsMember({"string", "null", "literal"}))
      ->capture_default_str();
  if (with_html) add_html_option(explain, options.html_path);
  explain.add_option("--precision", options.precision, "Digits after the point when printing tensors")
      ->check(CLI::Range(0, 17))
      ->capture_default_str();
  explain
      .add_option("--linewidth", options.line_width,
                  "Wrap printed arrays at this many columns (default: terminal width, 75 when piped)")
      ->check(CLI::Range(20, 100000));
  explain
      .add_option("--threshold", options.threshold,
                  "Summarize tensors with more elements than this with '...' (NumPy's threshold)")
      ->transform(non_negative_integer())
      ->capture_default_str();
  explain.add_flag("-q,--quiet", options.quiet, "Print no walkthrough (use with --dump)");
  explain.add_flag("--timings", options.timings,
                   "Print on stderr how long loading, the forward pass and the dump took, and on how many threads "
                   "(OMP_NUM_THREADS, else one per CPU)");
  explain.add_flag("--brief", options.brief, "Leave out the short explanation ('why') under each step");
  explain
      .add_option("--cell", options.cell,
                  "The element worked out in full, as b,h,i,j (batch, head, row, column; default 0,0,0,0)")
      ->check(values_from(ValueList::FreeText));
  explain
      .add_option("--steps", options.steps,
                  "Show only these steps: numbers, ranges and kinds, e.g. 5-9,softmax ('attn steps' lists them)")
      ->check(values_from(ValueList::StepKinds));
  explain.add_option("--layer", options.layer, "Show only one layer: 1, encoder.1 or decoder.0")
      ->check(non_empty("a layer: 1, encoder.1 or decoder.0"))
      ->check(values_from(ValueList::FreeText));
  explain.add_option("--head", options.head, "Show only this head of tensors with a head axis")
      ->transform(non_negative_integer());
  explain.add_option("--batch", options.batch, "Show only this batch item of tensors with a batch axis")
      ->transform(non_negative_integer());
  explain.add_flag("--pause", options.pause,
                   "Show one step at a time: Enter the next, b the one before, a step number that step, q quits");
  explain.add_flag("--full", options.full,
                   "Show every step in full (each explanation, worked element and view), vocabulary-sized tensors "
                   "whole");
  explain.add_option("--top", options.top_k, "Show vocabulary-sized rows as their K largest entries")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  explain
      .add_option("--color", options.color,
                  "Colour: auto (when stdout is a terminal and NO_COLOR is unset), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  explain
      .add_option("--heatmap", options.heatmap,
                  "Attention heatmaps: auto (colour cells when colour is on, else Unicode shading), color, shade, "
                  "ascii (plain characters)")
      ->check(CLI::IsMember({"auto", "color", "shade", "ascii"}))
      ->capture_default_str();
}

void setup_explain(CLI::App& app, ExplainOptions& options) {
  CLI::App* explain = app.add_subcommand(
      "explain", "Run a model and show every step of attention: formula, shapes on both sides, and the numbers");
  add_model_options(*explain, options);
  add_walkthrough_options(*explain, options, /*with_html=*/true);
  explain->callback([&options]() {
    const int code = run_explain(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

int run_explain(const ExplainOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  LoadOptions load;
  load.trace_kept = options.dump_path == "-";  // as the trace below: otherwise about one layer is kept
  Model model = load_run_model(options, load);
  // No target: the decoder reads what the model itself writes, as when it generates.
  if (model.target_tokens.from_bos) extend_target_greedily(model, generated_length(model));
  // A sentence from the command line can make the run as large as any file can.
  if (!options.text.empty() || !options.target.empty() || model.target_tokens.from_bos) check_run_memory(model, load);
  const double load_seconds = seconds_since(started);

  // Everything streams while the model runs: the walkthrough prints each step as it is
  // computed and keeps about one layer of tensors; a dump to a file writes each tensor to
  // the temporary file as it comes. A dump to stdout waits until the run has succeeded,
  // since what is written there cannot be taken back, so it keeps the whole trace.
  const bool dump_streams = !options.dump_path.empty() && options.dump_path != "-";
  const bool dump_at_end = options.dump_path == "-";
  Trace trace(!model.batched);
  trace.keep_entries(!options.quiet || dump_at_end || !options.html_path.empty());
  DumpOptions dump_options;
  dump_options.non_finite = parse_json_non_finite(options.json_non_finite).value_or(JsonNonFinite::String);
  std::unique_ptr<TraceDump> dump;
  if (dump_streams) dump = std::make_unique<TraceDump>(options.dump_path, model, dump_options);
  std::ostream& terminal = dump_at_end ? std::cerr : std::cout;
  const WalkthroughOptions walkthrough = walkthrough_options(options);
  check_selection(walkthrough, model);
  // The walkthrough is written once the run is over, its map first (and a wrong --steps
  // number is an error alone); --pause pages through it.
  std::ostringstream paged;
  std::ostream& out = options.pause ? paged : terminal;
  const auto lesson = open_html_lesson(options, "attn explain", model, walkthrough);
  // (--pause keeps the trace whole: two walkthroughs read it.)
  const bool forget = !dump_at_end && !options.pause;
  const auto printer = start_walkthrough(out, trace, model, walkthrough, options.quiet, forget, lesson.get());
  // --pause: the same walkthrough with every step in full, for a step jumped to.
  // (The printers keep a reference to their options: these live as long as they do.)
  std::ostringstream paged_in_full;
  WalkthroughOptions every_step_in_full = walkthrough;
  every_step_in_full.full = true;
  std::unique_ptr<StreamingWalkthrough> in_full;
  if (printer && options.pause)
    in_full = start_walkthrough(paged_in_full, trace, model, every_step_in_full, false, false, nullptr);
  // The progress line shares the terminal with nothing else: not while the walkthrough
  // prints to it.
  const bool show_progress =
      ::isatty(STDERR_FILENO) && (options.quiet || !::isatty(dump_at_end ? STDERR_FILENO : STDOUT_FILENO));
  ProgressLine progress(std::cerr, model.encoder.size(), model.decoder.size());
  double dump_seconds = 0, print_seconds = 0;
  if (dump || show_progress)
    trace.set_sink([&](const TraceRecord& record) {
      if (show_progress) progress.update(record.id, dump ? dump->bytes_written() : 0, seconds_since(started));
      if (!dump) return;
      timed(dump_seconds, [&] { dump->add(record); });
    });
  if (printer)
    trace.set_entry_observer([&](const TraceEntry& entry) {
      timed(print_seconds, [&] {
        if (in_full) in_full->add(entry);
        printer->add(entry);
      });
    });
  const auto run_started = std::chrono::steady_clock::now();
  try {
    run_model(model, trace);
  } catch (const NumericError&) {
    // Show every step up to the one that overflowed; the error then names it.
    if (printer) printer->finish(false);
    terminal << paged.str();
    throw;
  }
  if (printer) timed(print_seconds, [&] { printer->finish(); });
  if (in_full) in_full->finish();
  if (printer && options.pause && !options.quiet) {
    const PagedText full{paged_in_full.str(), in_full->step_places()};
    page_steps({paged.str(), printer->step_places()}, &full, std::cin, terminal, std::cerr);
  }
  // without the dump's and the walkthrough's shares
  const double forward_seconds = seconds_since(run_started) - dump_seconds - print_seconds;
  // A walkthrough that could not be written fails the run before the dump or the lesson is
  // committed.
  if (!options.dump_path.empty() || lesson) check_standard_output();
  if (lesson) lesson->commit();
  if (!options.dump_path.empty()) {
    timed(dump_seconds, [&] {
      if (dump_at_end) {
        dump = std::make_unique<TraceDump>(options.dump_path, model, dump_options);
        for (const auto& e : trace.entries()) dump->add(e.record());
      }
      dump->finish(trace);
    });
  }
  progress.clear();
  if (options.timings)
    std::cerr << fmt::format("attn: load {:.3f} s, forward {:.3f} s, dump {:.3f} s ({} thread{})\n", load_seconds,
                             forward_seconds, dump_seconds, omp_get_max_threads(),
                             omp_get_max_threads() == 1 ? "" : "s");
  if (options.quiet) {
    // The notes still matter without the walkthrough: an unknown word, a fully masked row.
    for (const auto& w : trace.warnings()) std::cerr << "note: " << w.name << ": " << w.message << "\n";
  }
  return 0;
}

}  // namespace attn::cli
