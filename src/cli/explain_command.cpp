#include "explain_command.h"

#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "attn/dump.h"
#include "attn/error.h"
#include "attn/model_file.h"
#include "attn/product_kernel.h"
#include "attn/walkthrough.h"
#include "command_run.h"
#include "forward/ablation.h"
#include "html_option.h"
#include "model/examples.h"
#include "pager.h"
#include "present/progress.h"
#include "present/query_grid.h"
#include "present/terminal.h"
#include "session/comparison_runs.h"
#include "validators.h"
#include "walkthrough_choice.h"

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

}  // namespace

void setup_explain(CLI::App& app, ExplainOptions& options) {
  CLI::App* explain = app.add_subcommand(
      "explain", "Run a model and show every step of attention: formula, shapes on both sides, and the numbers");
  add_model_options(*explain, options.model, options.reading);
  add_walkthrough_options(*explain, options.output, options.print, options.steps, /*with_html=*/true);
  add_reading_options(*explain, options.reading, /*with_lens=*/true);
  explain
      ->add_option("--query", options.query,
                   "After the walkthrough, where the token at this position looks in every layer and head: a grid "
                   "of the key each head weighs most, and its weight")
      ->transform(non_negative_integer());
  run_on_parse(*explain, options, run_explain);
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
  std::unique_ptr<QueryRows> query;  // --query: the token's row of every head's weights
  double print_seconds = 0;
};

// The walkthroughs: the terminal's (or --pause's text) and the lesson's, and with --pause the
// one with every step in full.
void start_printers(CommandRun& run, const ExplainOptions& options, const WalkthroughOptions& walkthrough, Trace& trace,
                    ExplainOutputs& outputs) {
  const bool pause = options.steps.pause;
  std::ostream& out = pause ? outputs.paged : run.terminal();
  // (--pause keeps the trace whole: two walkthroughs read it.)
  const bool forget = !run.dump_to_stdout() && !pause;
  outputs.printer =
      start_walkthrough(out, trace, run.model(), run.input(), walkthrough, options.output.quiet, forget, run.lesson());
  if (!outputs.printer || !pause) return;
  outputs.every_step_in_full = walkthrough;
  outputs.every_step_in_full.full = true;
  outputs.in_full = start_walkthrough(outputs.paged_in_full, trace, run.model(), run.input(),
                                      outputs.every_step_in_full, false, false, nullptr);
}

void start_outputs(CommandRun& run, const ExplainOptions& options, const WalkthroughOptions& walkthrough,
                   const RunPlan& plan, Trace& trace, ExplainOutputs& outputs,
                   std::chrono::steady_clock::time_point started) {
  run.open_lesson(walkthrough, plan);
  start_printers(run, options, walkthrough, trace, outputs);
  // The progress line shares the terminal with nothing else: not while the walkthrough
  // prints to it.
  const bool show_progress = ::isatty(STDERR_FILENO) &&
                             (options.output.quiet || !::isatty(run.dump_to_stdout() ? STDERR_FILENO : STDOUT_FILENO));
  if (show_progress)
    outputs.progress =
        std::make_unique<ProgressLine>(std::cerr, run.model().encoder.size(), run.model().decoder.size());
  TraceDump* dump = run.dump();
  if (options.query >= 0) outputs.query = std::make_unique<QueryRows>(static_cast<std::size_t>(options.query));
  if (dump || show_progress || outputs.query)
    trace.set_sink([&run, &outputs, dump, started](const TraceRecord& record) {
      if (outputs.query) outputs.query->see(record);
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
void add_induction_lesson(const ExplainOptions& options, const Session& session, WalkthroughOptions& walkthrough) {
  const std::string& example = options.model.example;
  if (example.empty() || std::string(find_example(example).name) != "trained_induction") return;
  const StepFilter& f = walkthrough.filter;
  const bool shown = !options.output.quiet || !options.output.html_path.empty();
  // (with --ablate the run's own heads are the ablated model's: the lesson is the model's)
  if (!shown || !options.reading.ablate.empty() || walkthrough.list_only || !f.ranges.empty() || !f.kinds.empty() ||
      f.layer || f.head)
    return;
  walkthrough.induction_lesson = std::make_shared<const InductionLesson>(induction_lesson(session));
}

// --query POS, before anything runs: a position of the source's tokens.
void check_query(const ExplainOptions& options, const Model& model, const RunInput& input) {
  if (options.query < 0) return;
  const std::size_t S = run_size_of(model, input).seq_len;
  if (static_cast<std::size_t>(options.query) >= S)
    throw InputError("--query", "",
                     fmt::format("expected a position of the {} tokens the self-attention reads (0 to {}), found {}", S,
                                 S ? S - 1 : 0, options.query));
}

// After the walkthrough: where the token looks in every layer and head.
void write_query_grid(CommandRun& run, const Trace& trace, const QueryRows& rows, std::size_t width) {
  const Model& model = run.model();
  std::vector<std::string> tokens;
  if (const auto* source = trace.tokens(Sequence::Source); source && !source->empty())
    for (const std::string& t : source->front()) tokens.push_back(readable_token(model, t));
  const std::string query = rows.position() < tokens.size() ? tokens[rows.position()] : "";
  run.terminal() << "\n"
                 << wrapped(fmt::format("══ Where \"{}\" (position {}) looks, in every layer and head ══", query,
                                        rows.position()),
                            width)
                 << "\n"
                 << rows.grid(tokens, model.decoder_only(), width);
}

// The walkthrough's options for this model and run: --lens and --ablate applied (with the
// unablated run's probabilities to show beside the ablated one's), the selection checked,
// the induction lesson measured.
WalkthroughOptions prepare_walkthrough(const ExplainOptions& options, Session& session) {
  WalkthroughOptions walkthrough = options_for_model(
      walkthrough_options(options.print, options.steps, options.output.dump_to_stdout()), session.model());
  // (the greedy target is the unablated model's own)
  session.apply_reading();
  const bool shown = !options.output.quiet || !options.output.html_path.empty();
  if (shown) walkthrough.lens_answer = session.lens_answer();
  if (shown && !session.input().ablation.empty() && session.model().output.present) {
    walkthrough.unablated_probabilities = std::make_shared<const Tensor>(unablated_probabilities(session));
    walkthrough.ablation_label = ablation_label(session.input().ablation);
  }
  check_selection(walkthrough, session.model(), session.input());
  check_query(options, session.model(), session.input());
  add_induction_lesson(options, session, walkthrough);
  return walkthrough;
}

// The forward pass, drawn as it runs. A step that overflows: every step up to it shown,
// then the error, which names it.
void run_forward(const Session& session, CommandRun& run, Trace& trace, ExplainOutputs& outputs) {
  try {
    session.run(trace);
  } catch (const NumericError&) {
    if (outputs.printer) outputs.printer->finish(false);
    run.terminal() << outputs.paged.str();
    throw;
  }
  if (outputs.printer) timed(outputs.print_seconds, [&] { outputs.printer->finish(); });
  if (outputs.in_full) outputs.in_full->finish();
}

void print_timings(double load_seconds, double forward_seconds, double dump_seconds) {
  const ProductTotals products = product_totals();  // the large products inside the forward pass
  std::cerr << fmt::format(
      "attn: load {:.3f} s, forward {:.3f} s (products {:.3f} s, {:.1f} GFLOP), dump {:.3f} s ({} thread{}, {} "
      "product kernel)\n",
      load_seconds, forward_seconds, products.seconds, products.flops / 1e9, dump_seconds, omp_get_max_threads(),
      omp_get_max_threads() == 1 ? "" : "s", attn::product_kernel_name());
}

// The session for explain's run: the trace kept whole only for a dump to stdout, the lens
// and the ablation counted; a checkpoint's weights stay as stored (only the forward pass
// computes with them: the walkthrough and the dumps widen the one they show or write).
std::unique_ptr<Session> open_explain_session(const ExplainOptions& options) {
  LoadOptions load;
  load.trace_kept = options.output.dump_to_stdout();  // as the trace: otherwise about one layer is kept
  load.lens = options.reading.lens;
  load.ablation = !options.reading.ablate.empty();
  load.weights_as_stored = true;
  return open_session(options.model, options.reading, options.output.dump_path, options.steps.pause, load);
}

// The run as explain makes it (attn/run_memory.h): the trace as the walkthrough and the dump
// keep it, --lens and --ablate (parsed into `ablation`, which the plan points to).
RunPlan explain_plan(const ExplainOptions& options, const Model& model, Ablation& ablation) {
  const bool walkthrough = !options.output.quiet || !options.output.html_path.empty();
  RunPlan plan;
  plan.kept = options.output.dump_to_stdout() || options.steps.pause ? RunPlan::Kept::Everything
              : walkthrough                                          ? RunPlan::Kept::Streamed
                                                                     : RunPlan::Kept::Nothing;
  plan.shown = !options.output.quiet;
  plan.dump_held = dump_memory(options.output.dump_path, model, dump_options_of(options.output));
  plan.lens = options.reading.lens;
  if (!options.reading.ablate.empty()) {
    ablation = parse_ablation(options.reading.ablate, options.reading.ablate_mean, model);
    plan.ablation = &ablation;
    plan.unablated_run = walkthrough;
  }
  return plan;
}

}  // namespace

int run_explain(const ExplainOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const std::unique_ptr<Session> session = open_explain_session(options);
  CommandRun run(*session, options.model, options.output, "attn explain");
  // No target: the decoder reads what the model itself writes, as when it generates. The
  // run is estimated before anything runs, as it will be: with the target the greedy picks
  // can grow to, the trace kept as the outputs keep it, --lens and --ablate.
  Ablation ablation;
  const RunPlan plan = explain_plan(options, session->model(), ablation);
  session->grow_target(plan);
  const double load_seconds = seconds_since(started);

  // Everything streams while the model runs: the walkthrough prints each step as it is
  // computed and keeps about one layer of tensors; a dump to a file writes each tensor to
  // the temporary file as it comes. A dump to stdout waits until the run has succeeded,
  // since what is written there cannot be taken back, so it keeps the whole trace.
  Trace trace(!session->input().batched);
  trace.keep_entries(!options.output.quiet || options.output.outputs_read_records_after());
  run.open_dump();
  const WalkthroughOptions walkthrough = prepare_walkthrough(options, *session);
  // The walkthrough is written once the run is over, its map first (and a wrong --steps
  // number is an error alone); --pause pages through it.
  ExplainOutputs outputs;
  start_outputs(run, options, walkthrough, plan, trace, outputs, started);
  const auto run_started = std::chrono::steady_clock::now();
  run_forward(*session, run, trace, outputs);
  if (outputs.query && !options.output.quiet)
    write_query_grid(run, trace, *outputs.query, walkthrough.array.line_width);
  if (outputs.printer && options.steps.pause && !options.output.quiet) {
    const PagedText full{outputs.paged_in_full.str(), outputs.in_full->step_places()};
    page_steps({outputs.paged.str(), outputs.printer->step_places()}, &full, std::cin, run.terminal(), std::cerr);
  }
  // without the dump's and the walkthrough's shares
  const double forward_seconds = seconds_since(run_started) - run.dump_seconds() - outputs.print_seconds;
  run.commit(trace);
  if (outputs.progress) outputs.progress->clear();
  if (options.output.timings) print_timings(load_seconds, forward_seconds, run.dump_seconds());
  run.print_notes_if_quiet(trace);
  return 0;
}

}  // namespace attn::cli
