// The walkthrough the command line asks for: its options from the printing and step-choice
// option groups (option_groups.h), and the --batch, --layer and --cell a run could never show,
// refused before anything runs.
#ifndef ATTN_CLI_WALKTHROUGH_CHOICE_H_
#define ATTN_CLI_WALKTHROUGH_CHOICE_H_

#include "attn/model.h"
#include "attn/run_input.h"
#include "attn/walkthrough.h"
#include "option_groups.h"

namespace attn::cli {

// The walkthrough's options from the command line's (the colour decided for the stream the
// walkthrough goes to: stderr when the dump takes stdout). InputError for a --cell, --steps
// or --layer it cannot read.
WalkthroughOptions walkthrough_options(const PrintChoice& print, const StepChoice& steps, bool dump_to_stdout);

// The --batch, --layer and --cell a run's walkthrough could never show: InputError before
// anything runs, naming the range the model has.
void check_selection(const WalkthroughOptions& walk, const Model& model, const RunInput& input);

}  // namespace attn::cli

#endif  // ATTN_CLI_WALKTHROUGH_CHOICE_H_
