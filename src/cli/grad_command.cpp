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
#include "attn/product_kernel.h"
#include "attn/run_memory.h"
#include "attn/walkthrough.h"
#include "command_run.h"
#include "forward/ablation.h"
#include "html_option.h"
#include "model/loss_section.h"
#include "pager.h"
#include "reading_options.h"
#include "standard_streams.h"
#include "validators.h"

namespace attn::cli {

namespace {

// The walkthrough of the whole run, forward and backward: written once made (a wrong
// --steps number is an error alone), or paged one step at a time with --pause.
void print_run(const Trace& trace, const Model& model, const RunInput& input, const ExplainOptions& options,
               std::ostream& terminal) {
  const WalkthroughOptions walkthrough = walkthrough_options(options);
  if (!options.pause) {
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

}  // namespace

void setup_grad(CLI::App& app, GradOptions& options) {
  CLI::App* grad = app.add_subcommand(
      "grad",
      "Run a model, compute its loss, then walk back through every step: the gradient of every tensor "
      "and every weight (the backward pass)");
  add_model_options(*grad, options.run);
  grad->add_option("--labels", options.labels,
                   "The loss's labels, one token per output position (replaces the model file's input.labels)")
      ->check(non_empty("the labels, as a sentence"));
  add_walkthrough_options(*grad, options.run, /*with_html=*/true);
  add_reading_options(*grad, options.run, /*with_lens=*/false);
  grad->callback([&options]() {
    const int code = run_grad(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

int run_grad(const GradOptions& grad) {
  const ExplainOptions& options = grad.run;
  const auto started = std::chrono::steady_clock::now();
  LoadOptions load;
  load.backward = true;  // the whole forward trace is kept, and a gradient for every tensor
  load.ablation = !options.ablate.empty();
  // No greedy target here: a decoder without one reads <BOS> alone, the labels' one position.
  CommandRun run(options, "attn grad", load);
  const Model& model = run.model();
  RunInput& input = run.input();
  // --labels alone implies the decoder's target, --target alone the labels (a training pair).
  if (model.has_target() && !grad.labels.empty() && options.target.empty())
    replace_target_text(model, input, target_implied_by_labels(model, grad.labels),
                        "the target --labels imply (<BOS> and the labels but the last)");
  const std::string labels = !grad.labels.empty() || options.target.empty() || !model.output.present
                                 ? grad.labels
                                 : labels_implied_by_target(model, input);
  if (!labels.empty())
    replace_labels(model, input, labels,
                   grad.labels.empty() ? "the labels --target implies (the target shifted, then <EOS>)"
                                       : "--labels (command line)");
  // A causal language model without labels learns its own text's next tokens.
  if (labels.empty()) use_next_tokens_as_labels(model, input);
  check_loss_defined(model, input);
  // --ablate: the loss is the ablated model's, and the backward pass goes through the ablation
  if (!options.ablate.empty()) input.ablation = parse_ablation(options.ablate, options.ablate_mean, model);
  // The run is estimated before it runs: the trace kept whole, a gradient for every entry
  // (kept when shown) and every weight.
  RunPlan plan = run_plan(run.load_options());
  plan.shown = !options.quiet;
  plan.model_file_bytes = model_file_bytes(options);
  check_run_memory(model, input, run.load_options(), plan);
  // Bad --steps, --layer, --cell, --batch: refused before the run.
  const WalkthroughOptions walkthrough = walkthrough_options(options);
  check_selection(walkthrough, model, input);
  const double load_seconds = seconds_since(started);

  // The backward reads every forward entry, so the trace keeps them. The gradients are kept
  // for the walkthrough and for a dump to stdout (written once the run has succeeded); a
  // dump to a file takes each record as it is made, as explain's does.
  Trace trace(!input.batched);
  trace.keep_gradients(!options.quiet || run.dump_to_stdout() || !options.html_path.empty());
  run.open_dump();
  run.stream_into_dump(trace);
  // The lesson (--html) is drawn once the backward pass is done, and committed when the
  // terminal's walkthrough was written; a path that cannot take it is refused here.
  run.open_lesson(walkthrough);
  auto timer = std::chrono::steady_clock::now();
  try {
    run_model(model, input, trace);
  } catch (const NumericError&) {
    // Show every step up to the one that overflowed; the error then names it.
    if (!options.quiet) print_run(trace, model, input, options, run.terminal());
    throw;
  }
  const double forward_seconds = seconds_since(timer) - run.dump_seconds();
  timer = std::chrono::steady_clock::now();
  const double dumped_before_backward = run.dump_seconds();
  run_backward(model, input, trace);
  const double backward_seconds = seconds_since(timer) - (run.dump_seconds() - dumped_before_backward);

  if (!options.quiet) print_run(trace, model, input, options, run.terminal());
  if (run.lesson()) draw_lesson(*run.lesson(), trace, model, input, walkthrough);
  run.commit(trace);
  if (options.timings)
    std::cerr << fmt::format(
        "attn: load {:.3f} s, forward {:.3f} s, backward {:.3f} s, dump {:.3f} s ({} thread{}, {} product kernel)\n",
        load_seconds, forward_seconds, backward_seconds, run.dump_seconds(), omp_get_max_threads(),
        omp_get_max_threads() == 1 ? "" : "s", attn::product_kernel_name());
  run.print_notes_if_quiet(trace);
  return 0;
}

}  // namespace attn::cli
