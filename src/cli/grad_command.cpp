#include "grad_command.h"

#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "attn/backward.h"
#include "attn/dump.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/walkthrough.h"
#include "html_option.h"
#include "pager.h"
#include "standard_streams.h"
#include "validators.h"

namespace attn::cli {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The walkthrough of the whole run, forward and backward: written once made (a wrong
// --steps number is an error alone), or paged one step at a time with --pause.
void print_run(const Trace& trace, const Model& model, const ExplainOptions& options, std::ostream& terminal) {
  const WalkthroughOptions walkthrough = walkthrough_options(options);
  if (!options.pause) {
    print_walkthrough(terminal, trace, model, walkthrough);
    return;
  }
  // A step jumped to is shown from the walkthrough with every step in full.
  PagedText paged, in_full;
  std::ostringstream text, full_text;
  print_walkthrough(text, trace, model, walkthrough, &paged.places);
  WalkthroughOptions full = walkthrough;
  full.full = true;
  print_walkthrough(full_text, trace, model, full, &in_full.places);
  paged.text = text.str();
  in_full.text = full_text.str();
  page_steps(paged, &in_full, std::cin, terminal, std::cerr);
}

}  // namespace

void setup_grad(CLI::App& app, ExplainOptions& options) {
  CLI::App* grad = app.add_subcommand(
      "grad",
      "Run a model, compute its loss, then walk back through every step: the gradient of every tensor "
      "and every weight (the backward pass)");
  add_model_options(*grad, options);
  grad->add_option("--labels", options.labels,
                   "The loss's labels, one token per output position (replaces the model file's input.labels)")
      ->check(non_empty("the labels, as a sentence"));
  add_walkthrough_options(*grad, options, /*with_html=*/true);
  grad->callback([&options]() {
    const int code = run_grad(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

int run_grad(const ExplainOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  LoadOptions load;
  load.backward = true;  // the whole forward trace is kept, and a gradient for every tensor
  // No greedy target here: a decoder without one reads <BOS> alone, the labels' one position.
  Model model = load_run_model(options, load);
  if (!options.labels.empty()) replace_labels(model, options.labels, "--labels (command line)");
  check_loss_defined(model);
  // A sentence from the command line can make the run as large as any file can.
  if (!options.text.empty() || !options.target.empty()) check_run_memory(model, load);
  // Bad --steps, --layer, --cell, --batch: refused before the run.
  const WalkthroughOptions walkthrough = walkthrough_options(options);
  check_selection(walkthrough, model);
  const double load_seconds = seconds_since(started);

  // The backward reads every forward entry, so the trace keeps them. The gradients are kept
  // for the walkthrough and for a dump to stdout (written once the run has succeeded); a
  // dump to a file takes each record as it is made, as explain's does.
  Trace trace(!model.batched);
  const bool dump_to_stdout = options.dump_path == "-";
  trace.keep_gradients(!options.quiet || dump_to_stdout || !options.html_path.empty());
  DumpOptions dump_options;
  dump_options.non_finite = parse_json_non_finite(options.json_non_finite).value_or(JsonNonFinite::String);
  std::unique_ptr<TraceDump> dump;
  double dump_seconds = 0;
  if (!options.dump_path.empty() && !dump_to_stdout) {
    dump = std::make_unique<TraceDump>(options.dump_path, model, dump_options);
    trace.set_sink([&](const TraceRecord& record) {
      const auto before = std::chrono::steady_clock::now();
      dump->add(record);
      dump_seconds += seconds_since(before);
    });
  }
  std::ostream& terminal = dump_to_stdout ? std::cerr : std::cout;
  // The lesson (--html) is drawn once the backward pass is done, and committed when the
  // terminal's walkthrough was written; a path that cannot take it is refused here.
  const auto lesson = open_html_lesson(options, "attn grad", model, walkthrough);
  auto timer = std::chrono::steady_clock::now();
  try {
    run_model(model, trace);
  } catch (const NumericError&) {
    // Show every step up to the one that overflowed; the error then names it.
    if (!options.quiet) print_run(trace, model, options, terminal);
    throw;
  }
  const double forward_seconds = seconds_since(timer) - dump_seconds;
  timer = std::chrono::steady_clock::now();
  const double dumped_before_backward = dump_seconds;
  run_backward(model, trace);
  const double backward_seconds = seconds_since(timer) - (dump_seconds - dumped_before_backward);

  if (!options.quiet) print_run(trace, model, options, terminal);
  if (lesson) {
    draw_lesson(*lesson, trace, model, walkthrough);
    // A walkthrough that could not be written fails the run before the lesson is committed.
    check_standard_output();
    lesson->commit();
  }
  if (!options.dump_path.empty()) {
    // A walkthrough that could not be written fails the run before the dump is committed.
    check_standard_output();
    timer = std::chrono::steady_clock::now();
    if (dump_to_stdout) {
      dump = std::make_unique<TraceDump>(options.dump_path, model, dump_options);
      for (const auto& e : trace.entries()) dump->add(e.record());
    }
    dump->finish(trace);
    dump_seconds += seconds_since(timer);
  }
  if (options.timings)
    std::cerr << fmt::format("attn: load {:.3f} s, forward {:.3f} s, backward {:.3f} s, dump {:.3f} s ({} thread{})\n",
                             load_seconds, forward_seconds, backward_seconds, dump_seconds, omp_get_max_threads(),
                             omp_get_max_threads() == 1 ? "" : "s");
  if (options.quiet)
    for (const auto& w : trace.warnings()) std::cerr << "note: " << w.name << ": " << w.message << "\n";
  return 0;
}

}  // namespace attn::cli
