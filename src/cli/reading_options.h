// The options that read what a model learned (docs/heads.md): --lens (attn explain) and
// --ablate / --ablate-mean (attn explain, attn heads).
#ifndef ATTN_CLI_READING_OPTIONS_H_
#define ATTN_CLI_READING_OPTIONS_H_

#include <CLI/CLI.hpp>

#include "attn/model.h"
#include "attn/run_input.h"
#include "attn/walkthrough.h"
#include "explain_command.h"

namespace attn::cli {

// Adds --ablate and --ablate-mean, and --lens when `with_lens`.
void add_reading_options(CLI::App& command, ExplainOptions& options, bool with_lens);

// Puts the options into the run's input: the lens, and the ablation, parsed against the
// model (InputError("--ablate") or ("--lens") for what it cannot do). With an ablation and an
// output head, first runs the input without it and gives its next-token probabilities to
// `walkthrough` (when not null) to show beside the ablated run's.
void apply_reading_options(const ExplainOptions& options, const Model& model, RunInput& input,
                           WalkthroughOptions* walkthrough);

// The next-token probabilities of `input` without its ablation (and without the lens),
// (B,T,V) as run_model returns them.
Tensor unablated_probabilities(const Model& model, const RunInput& input);

// The induction lesson's measurements (attn explain --example induction, docs/heads.md): the
// copies of `input`'s first sequence (analysis/head_scores.h's copy_targets) without
// ablation, with each head of the model's one stack zeroed, then with each layer's heads
// zeroed together; runs of their own, without the input's --ablate and --lens.
InductionLesson induction_lesson(const Model& model, const RunInput& input);

}  // namespace attn::cli

#endif  // ATTN_CLI_READING_OPTIONS_H_
