#include "explain_command.h"

#include <omp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "attn/dump.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/load_model.h"
#include "attn/model_file.h"
#include "attn/product_kernel.h"
#include "attn/run_memory.h"
#include "attn/walkthrough.h"
#include "command_run.h"
#include "forward/ablation.h"
#include "html_option.h"
#include "model/default_model.h"
#include "model/examples.h"
#include "pager.h"
#include "present/progress.h"
#include "present/terminal.h"
#include "reading_options.h"
#include "standard_streams.h"
#include "validators.h"

namespace attn::cli {

namespace {

// Runs `work` and adds the seconds it took to `total` (the dump's and the walkthrough's
// shares of a run, which --timings leaves out of the forward pass).
template <typename F>
void timed(double& total, F&& work) {
  const auto before = std::chrono::steady_clock::now();
  work();
  total += seconds_since(before);
}

// The element --cell names: four non-negative integers b,h,i,j, each within 2^64 - 1 (a
// larger one was read as 9223372036854775807).
std::array<std::size_t, 4> parse_cell(const std::string& text) {
  const auto refuse = [&](const std::string& why) {
    throw InputError(
        "--cell", "",
        "expected four non-negative integers b,h,i,j (batch, head, row, column), found \"" + text + "\"" + why);
  };
  std::array<std::size_t, 4> cell{};
  std::size_t k = 0, at = 0;
  for (; k < 4 && at <= text.size(); ++k) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    std::string part = text.substr(at, comma - at);
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) refuse("");
    errno = 0;
    const unsigned long long v = std::strtoull(part.c_str(), nullptr, 10);
    if (errno == ERANGE) refuse(": " + part + " is past the largest index, 18446744073709551615");
    cell[k] = static_cast<std::size_t>(v);
    at = comma + 1;
  }
  if (k != 4 || at <= text.size()) refuse("");
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
void check_selection(const WalkthroughOptions& walk, const Model& model, const RunInput& input) {
  const RunSize size = run_size_of(model, input);
  const StepFilter& filter = walk.filter;
  if (filter.batch && !input.batched)
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
  const std::size_t B = input.batched ? size.batch : 1, rows = std::max(size.seq_len, size.target_len);
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
LoadedModel load_run_model(const ExplainOptions& options, LoadOptions& load) {
  const bool model_from_stdin = options.model_file == "-";
  if (model_from_stdin && options.pause)
    throw InputError("--pause", "", "waits for Enter on standard input, which -c - reads the model file from");
  if (!options.dump_path.empty())
    check_dump_target(options.dump_path, {model_from_stdin ? std::string() : options.model_file});
  if (options.max_memory_gib > 0)
    load.max_memory_bytes = static_cast<std::uint64_t>(options.max_memory_gib * 1073741824.0);
  LoadedModel loaded;
  if (!options.example.empty()) {
    const BundledExample& example = find_example(options.example);
    loaded = load_model_text(example.json, std::string("example ") + example.name, load);
  } else if (!options.checkpoint.empty()) {
    loaded = load_checkpoint(options.checkpoint, load);
  } else {
    loaded = options.model_file.empty() ? load_model_text(default_model_json(), kDefaultModelSource, load)
                                        : load_model(options.model_file, load);
  }
  // A checkpoint has no input of its own: its text is the command line's (an empty one is
  // refused by name), encoded by its tokenizer.
  const bool checkpoint = loaded.model.checkpoint.present();
  if (!options.text.empty() || (checkpoint && !options.text_optional))
    replace_source_text(loaded.model, loaded.input, options.text, "text (command line)");
  if (checkpoint && loaded.input.has_tokens()) check_run_memory(loaded.model, loaded.input, load);
  if (!options.target.empty())
    replace_target_text(loaded.model, loaded.input, options.target, "--target (command line)");
  return loaded;
}

std::string model_source_name(const ExplainOptions& options) {
  // Display text: a folder or file name may hold any byte but NUL, escaped as the error
  // messages escape it (printable), wherever the name is shown.
  if (!options.checkpoint.empty()) return printable(options.checkpoint);
  if (!options.example.empty()) return std::string("example ") + find_example(options.example).name;
  return options.model_file.empty() ? kDefaultModelSource : printable(model_file_name(options.model_file));
}

std::uint64_t model_file_bytes(const ExplainOptions& options) {
  if (!options.example.empty()) return std::string(find_example(options.example).json).size();
  if (!options.checkpoint.empty() || options.model_file == "-") return 0;
  if (options.model_file.empty()) return default_model_json().size();
  struct stat info {};
  return ::stat(options.model_file.c_str(), &info) == 0 && S_ISREG(info.st_mode)
             ? static_cast<std::uint64_t>(info.st_size)
             : 0;
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
  add_checkpoint_option(command, options);
  command
      .add_option("--max-memory", options.max_memory_gib,
                  "Refuse runs estimated to need more than this many GiB (default: half the machine's memory)")
      ->check(memory_limit_gib());
}

void add_checkpoint_option(CLI::App& command, ExplainOptions& options) {
  command
      .add_option("--model", options.checkpoint,
                  "A Hugging Face model: a folder holding config.json, safetensors and the tokenizer's files, or a Hub "
                  "name found in the local cache (docs/real-models.md)")
      ->check(non_empty("a folder or a Hub name"))
      ->excludes("--config")
      ->excludes("--example");
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
  explain
      .add_option("--dump-parameters", options.dump_parameters,
                  "Whether the dump holds the model's parameters after the tensors: yes, no, or auto (yes when they "
                  "take at most 16 MiB as float64: a small model's weights, not a paper-sized one's)")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
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
      ->check(non_empty("an element: b,h,i,j"))
      ->check(values_from(ValueList::FreeText));
  explain
      .add_option("--steps", options.steps,
                  "Show only these steps: numbers, ranges and kinds, e.g. 5-9,softmax ('attn steps' lists them)")
      ->check(non_empty("steps: numbers, ranges and kinds, e.g. 5-9,softmax"))
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
  add_reading_options(*explain, options, /*with_lens=*/true);
  explain->callback([&options]() {
    const int code = run_explain(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

namespace {

// The walkthrough as the run makes it (on the terminal, into the lesson), with the progress
// line on stderr while nothing else prints there, and the streamed dump.
struct ExplainOutputs {
  std::unique_ptr<StreamingWalkthrough> printer;
  std::ostringstream paged;  // --pause: the whole walkthrough, paged once the run is over
  // --pause: the same walkthrough with every step in full, for a step jumped to. (The
  // printers keep a reference to their options: these live as long as they do.)
  std::ostringstream paged_in_full;
  WalkthroughOptions every_step_in_full;
  std::unique_ptr<StreamingWalkthrough> in_full;
  std::unique_ptr<ProgressLine> progress;
  double print_seconds = 0;
};

void start_outputs(CommandRun& run, const ExplainOptions& options, const WalkthroughOptions& walkthrough, Trace& trace,
                   ExplainOutputs& outputs, std::chrono::steady_clock::time_point started) {
  run.open_lesson(walkthrough);
  std::ostream& out = options.pause ? outputs.paged : run.terminal();
  // (--pause keeps the trace whole: two walkthroughs read it.)
  const bool forget = !run.dump_to_stdout() && !options.pause;
  outputs.printer =
      start_walkthrough(out, trace, run.model(), run.input(), walkthrough, options.quiet, forget, run.lesson());
  if (outputs.printer && options.pause) {
    outputs.every_step_in_full = walkthrough;
    outputs.every_step_in_full.full = true;
    outputs.in_full = start_walkthrough(outputs.paged_in_full, trace, run.model(), run.input(),
                                        outputs.every_step_in_full, false, false, nullptr);
  }
  // The progress line shares the terminal with nothing else: not while the walkthrough
  // prints to it.
  const bool show_progress =
      ::isatty(STDERR_FILENO) && (options.quiet || !::isatty(run.dump_to_stdout() ? STDERR_FILENO : STDOUT_FILENO));
  if (show_progress)
    outputs.progress =
        std::make_unique<ProgressLine>(std::cerr, run.model().encoder.size(), run.model().decoder.size());
  TraceDump* dump = run.dump();
  if (dump || show_progress)
    trace.set_sink([&run, &outputs, dump, started](const TraceRecord& record) {
      if (outputs.progress)
        outputs.progress->update(record.id, dump ? dump->bytes_written() : 0, seconds_since(started));
      if (dump) timed(run.dump_seconds(), [&] { dump->add(record); });
    });
  if (outputs.printer)
    trace.set_entry_observer([&outputs](const TraceEntry& entry) {
      timed(outputs.print_seconds, [&] {
        if (outputs.in_full) outputs.in_full->add(entry);
        outputs.printer->add(entry);
      });
    });
}

// The induction example's lesson after its steps (docs/heads.md), when a walkthrough shows
// them all and nothing is ablated: the runs it measures, made now.
void add_induction_lesson(const ExplainOptions& options, const Model& model, const RunInput& input,
                          WalkthroughOptions& walkthrough) {
  if (options.example.empty() || std::string(find_example(options.example).name) != "trained_induction") return;
  const StepFilter& f = walkthrough.filter;
  const bool shown = !options.quiet || !options.html_path.empty();
  // (with --ablate the run's own heads are the ablated model's: the lesson is the model's)
  if (!shown || !options.ablate.empty() || walkthrough.list_only || !f.ranges.empty() || !f.kinds.empty() || f.layer ||
      f.head)
    return;
  walkthrough.induction_lesson = std::make_shared<const InductionLesson>(induction_lesson(model, input));
}

// The run as explain makes it (attn/run_memory.h): the trace as the walkthrough and the dump
// keep it, the target the greedy picks grow, --lens and --ablate (parsed into `ablation`).
RunPlan explain_plan(const ExplainOptions& options, const CommandRun& run, const Model& model, const RunInput& input,
                     Ablation& ablation) {
  const bool walkthrough = !options.quiet || !options.html_path.empty();
  RunPlan plan;
  plan.kept = run.dump_to_stdout() || options.pause ? RunPlan::Kept::Everything
              : walkthrough                         ? RunPlan::Kept::Streamed
                                                    : RunPlan::Kept::Nothing;
  plan.shown = !options.quiet;
  plan.model_file_bytes = model_file_bytes(options);
  if (input.target_tokens.from_bos) plan.target_len = generated_length(input) + 1;
  plan.lens = options.lens;
  if (!options.ablate.empty()) {
    ablation = parse_ablation(options.ablate, options.ablate_mean, model);
    plan.ablation = &ablation;
    plan.unablated_run = walkthrough;
  }
  return plan;
}

}  // namespace

int run_explain(const ExplainOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  LoadOptions load;
  load.trace_kept = options.dump_path == "-";  // as the trace below: otherwise about one layer is kept
  load.lens = options.lens;
  load.ablation = !options.ablate.empty();
  // Only the forward pass computes with the weights (the walkthrough and the dumps widen
  // the one they show or write): a checkpoint's stay as stored.
  load.weights_as_stored = true;
  CommandRun run(options, "attn explain", load);
  const Model& model = run.model();
  RunInput& input = run.input();
  // The run is estimated before anything runs, as it will be: with the target the greedy
  // picks below can grow to, the trace kept as the outputs keep it, --lens and --ablate.
  const bool greedy = input.target_tokens.from_bos;
  Ablation ablation;
  check_run_memory(model, input, run.load_options(), explain_plan(options, run, model, input, ablation));
  // No target: the decoder reads what the model itself writes, as when it generates.
  if (greedy) extend_target_greedily(model, input, generated_length(input));
  const double load_seconds = seconds_since(started);

  // Everything streams while the model runs: the walkthrough prints each step as it is
  // computed and keeps about one layer of tensors; a dump to a file writes each tensor to
  // the temporary file as it comes. A dump to stdout waits until the run has succeeded,
  // since what is written there cannot be taken back, so it keeps the whole trace.
  Trace trace(!input.batched);
  trace.keep_entries(!options.quiet || run.dump_to_stdout() || !options.html_path.empty());
  run.open_dump();
  WalkthroughOptions walkthrough = options_for_model(walkthrough_options(options), model);
  // --lens and --ablate (the greedy target above is the unablated model's own)
  apply_reading_options(options, model, input, options.quiet && options.html_path.empty() ? nullptr : &walkthrough);
  check_selection(walkthrough, model, input);
  add_induction_lesson(options, model, input, walkthrough);
  // The walkthrough is written once the run is over, its map first (and a wrong --steps
  // number is an error alone); --pause pages through it.
  ExplainOutputs outputs;
  start_outputs(run, options, walkthrough, trace, outputs, started);
  const auto run_started = std::chrono::steady_clock::now();
  try {
    run_model(model, input, trace);
  } catch (const NumericError&) {
    // Show every step up to the one that overflowed; the error then names it.
    if (outputs.printer) outputs.printer->finish(false);
    run.terminal() << outputs.paged.str();
    throw;
  }
  if (outputs.printer) timed(outputs.print_seconds, [&] { outputs.printer->finish(); });
  if (outputs.in_full) outputs.in_full->finish();
  if (outputs.printer && options.pause && !options.quiet) {
    const PagedText full{outputs.paged_in_full.str(), outputs.in_full->step_places()};
    page_steps({outputs.paged.str(), outputs.printer->step_places()}, &full, std::cin, run.terminal(), std::cerr);
  }
  // without the dump's and the walkthrough's shares
  const double forward_seconds = seconds_since(run_started) - run.dump_seconds() - outputs.print_seconds;
  run.commit(trace);
  if (outputs.progress) outputs.progress->clear();
  if (options.timings) {
    const ProductTotals products = product_totals();  // the large products inside the forward pass
    std::cerr << fmt::format(
        "attn: load {:.3f} s, forward {:.3f} s (products {:.3f} s, {:.1f} GFLOP), dump {:.3f} s ({} thread{}, {} "
        "product kernel)\n",
        load_seconds, forward_seconds, products.seconds, products.flops / 1e9, run.dump_seconds(),
        omp_get_max_threads(), omp_get_max_threads() == 1 ? "" : "s", attn::product_kernel_name());
  }
  run.print_notes_if_quiet(trace);
  return 0;
}

}  // namespace attn::cli
