#include "reading_options.h"

#include <memory>

#include "attn/error.h"
#include "attn/forward.h"
#include "forward/ablation.h"
#include "validators.h"

namespace attn::cli {

void add_reading_options(CLI::App& command, ExplainOptions& options, bool with_lens) {
  if (with_lens)
    command.add_flag("--lens", options.lens,
                     "The logit lens: after every layer, the final norm and the output head, each position's top "
                     "token per layer (docs/heads.md)");
  command
      .add_option("--ablate", options.ablate,
                  "Ablate these heads: their context set to zero and everything after recomputed, shown beside the "
                  "unablated run; L.H[,L.H...], or encoder.L.H / decoder.L.H (docs/heads.md)")
      ->check(values_from(ValueList::FreeText));
  command
      .add_flag("--ablate-mean", options.ablate_mean,
                "With --ablate: each ablated head's context replaced by its mean over the positions, not zero")
      ->needs("--ablate");
}

Tensor unablated_probabilities(const Model& model, const RunInput& input) {
  RunInput plain = input;
  plain.ablation = Ablation{};
  plain.lens = false;
  Trace trace(!input.batched);
  trace.keep_entries(false);
  return run_model(model, plain, trace);
}

void apply_reading_options(const ExplainOptions& options, const Model& model, RunInput& input,
                           WalkthroughOptions* walkthrough) {
  if (options.lens && !model.output.present)
    throw InputError("--lens", "",
                     "this model has no output head (\"output\" in the model file): there are no logits to read after "
                     "each layer");
  input.lens = options.lens;
  if (options.ablate.empty()) return;
  const Ablation ablation = parse_ablation(options.ablate, options.ablate_mean, model);
  if (walkthrough && model.output.present) {
    walkthrough->unablated_probabilities = std::make_shared<const Tensor>(unablated_probabilities(model, input));
    walkthrough->ablation_label = ablation_label(ablation);
  }
  input.ablation = ablation;
}

}  // namespace attn::cli
