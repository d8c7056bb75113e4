#include "grad_command.h"

#include <chrono>
#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <omp.h>

#include "attn/error.h"
#include "attn/model_file.h"
#include "attn/product_kernel.h"
#include "attn/walkthrough.h"
#include "command_run.h"
#include "html_option.h"
#include "pager.h"
#include "validators.h"
#include "walkthrough_choice.h"

namespace attn::cli {

namespace {

// The walkthrough of the whole run, forward and backward: written once made (a wrong
// --steps number is an error alone), or paged one step at a time with --pause.
void print_run(const Trace& trace, const Session& session, const GradOptions& options, std::ostream& terminal) {
  const Model& model = session.model();
  const RunInput& input = session.input();
  const WalkthroughOptions walkthrough =
      walkthrough_options(options.print, options.steps, options.output.dump_to_stdout());
  if (!options.steps.pause) {
    print_walkthrough(terminal, trace, model, input, walkthrough);
    return;
  }
  // A step jumped to is shown from the walkthrough with every step in full.
  PagedText paged, in_full;
  std::ostringstream text, full_text;
  print_walkthrough(text, trace, model, input, walkthrough, &paged.places);
  WalkthroughOptions full = walkthrough;
  full.full = true;
  print_walkthrough(full_text, trace, model, input, full, &in_full.places);
  paged.text = text.str();
  in_full.text = full_text.str();
  page_steps(paged, &in_full, std::cin, terminal, std::cerr);
}

// How long the forward and the backward pass took, without the dump's share.
struct GradSeconds {
  double forward = 0, backward = 0;
};

// The forward pass, then the backward pass over its kept trace. A step that overflows:
// every step up to it shown, then the error, which names it.
GradSeconds run_both_passes(const Session& session, const GradOptions& options, CommandRun& run, Trace& trace) {
  GradSeconds seconds;
  auto timer = std::chrono::steady_clock::now();
  try {
    session.run(trace);
  } catch (const NumericError&) {
    if (!options.output.quiet) print_run(trace, session, options, run.terminal());
    throw;
  }
  seconds.forward = seconds_since(timer) - run.dump_seconds();
  timer = std::chrono::steady_clock::now();
  const double dumped_before_backward = run.dump_seconds();
  session.backward(trace);
  seconds.backward = seconds_since(timer) - (run.dump_seconds() - dumped_before_backward);
  return seconds;
}

// The session for grad's run: its input, loss and ablation in place, checked before anything
// runs; then the walkthrough's options (bad --steps, --layer, --cell, --batch refused).
std::unique_ptr<Session> open_grad_session(const GradOptions& options, WalkthroughOptions& walkthrough, RunPlan& plan) {
  LoadOptions load;
  load.backward = true;  // the whole forward trace is kept, and a gradient for every tensor
  load.ablation = !options.reading.ablate.empty();
  // No greedy target here: a decoder without one reads <BOS> alone, the labels' one position.
  auto session = open_session(options.model, options.reading, options.output.dump_path, options.steps.pause, load);
  session->set_labels(options.labels);
  // --ablate: the loss is the ablated model's, and the backward pass goes through the ablation
  session->apply_reading();
  // The run is estimated before it runs: the trace kept whole, a gradient for every entry
  // (kept when shown) and every weight.
  plan = run_plan(session->load_options());
  plan.shown = !options.output.quiet;
  plan.dump_held = dump_memory(options.output.dump_path, session->model(), dump_options_of(options.output));
  plan.gradients_kept = options.output.outputs_read_records_after();  // as run_grad keeps them
  session->check_memory(plan);
  walkthrough = walkthrough_options(options.print, options.steps, options.output.dump_to_stdout());
  check_selection(walkthrough, session->model(), session->input());
  return session;
}

}  // namespace

void setup_grad(CLI::App& app, GradOptions& options) {
  CLI::App* grad = app.add_subcommand(
      "grad",
      "Run a model, compute its loss, then walk back through every step: the gradient of every tensor "
      "and every weight (the backward pass)");
  add_model_options(*grad, options.model, options.reading);
  grad->add_option("--labels", options.labels,
                   "The loss's labels, one token per output position (replaces the model file's input.labels)")
      ->check(non_empty("the labels, as a sentence"));
  add_walkthrough_options(*grad, options.output, options.print, options.steps, /*with_html=*/true);
  add_reading_options(*grad, options.reading, /*with_lens=*/false);
  run_on_parse(*grad, options, run_grad);
}

int run_grad(const GradOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const OutputChoice& output = options.output;
  WalkthroughOptions walkthrough;
  RunPlan plan;
  const std::unique_ptr<Session> session = open_grad_session(options, walkthrough, plan);
  CommandRun run(*session, options.model, output, "attn grad");
  const double load_seconds = seconds_since(started);

  // The backward reads every forward entry, so the trace keeps them. The gradients are kept
  // for the walkthrough and for the outputs that read them when the run is done.
  Trace trace(!session->input().batched);
  trace.keep_gradients(!output.quiet || output.outputs_read_records_after());
  run.open_dump();
  run.stream_into_dump(trace);
  // The lesson (--html) is drawn once the backward pass is done, and committed when the
  // terminal's walkthrough was written; a path that cannot take it is refused here.
  run.open_lesson(walkthrough, plan);
  const GradSeconds seconds = run_both_passes(*session, options, run, trace);
  if (!output.quiet) print_run(trace, *session, options, run.terminal());
  if (run.lesson()) draw_lesson(*run.lesson(), trace, session->model(), session->input(), walkthrough);
  run.commit(trace);
  if (output.timings)
    std::cerr << fmt::format(
        "attn: load {:.3f} s, forward {:.3f} s, backward {:.3f} s, dump {:.3f} s ({} thread{}, {} product kernel)\n",
        load_seconds, seconds.forward, seconds.backward, run.dump_seconds(), omp_get_max_threads(),
        omp_get_max_threads() == 1 ? "" : "s", attn::product_kernel_name());
  run.print_notes_if_quiet(trace);
  return 0;
}

}  // namespace attn::cli
