#include "reading_options.h"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "analysis/head_scores.h"
#include "attn/error.h"
#include "attn/experiments.h"
#include "attn/forward.h"
#include "forward/ablation.h"
#include "validators.h"

namespace attn::cli {

void add_reading_options(CLI::App& command, ExplainOptions& options, bool with_lens) {
  if (with_lens) {
    command.add_flag("--lens", options.lens,
                     "The logit lens: after every layer, the final norm and the output head, each position's top "
                     "token per layer (docs/heads.md)");
    command
        .add_option("--answer", options.answer,
                    "With --lens: this token's rank, logit and probability at the last position after every layer "
                    "(docs/experiments.md)")
        ->needs("--lens")
        ->check(values_from(ValueList::FreeText));
  }
  command
      .add_option("--ablate", options.ablate,
                  "Ablate these heads: their context set to zero and everything after recomputed, shown beside the "
                  "unablated run; L.H[,L.H...], or encoder.L.H / decoder.L.H (docs/heads.md)")
      ->check(non_empty("heads: L.H[,L.H...]"))
      ->check(values_from(ValueList::FreeText));
  command
      .add_flag("--ablate-mean", options.ablate_mean,
                "With --ablate: each ablated head's context replaced by its mean over the positions, not zero")
      ->needs("--ablate");
}

namespace {

// The next-token probabilities (S,V) of `input`'s first sequence with `ablation` (and no
// lens); `ids`, when not null, gets its token ids.
Tensor probabilities_with(const Model& model, const RunInput& input, const Ablation& ablation,
                          std::vector<std::size_t>* ids) {
  RunInput run = input;
  run.ablation = ablation;
  run.lens = false;
  Trace trace(!input.batched);
  trace.keep_entries(false);
  if (ids)
    trace.set_sink([ids](const TraceRecord& r) {
      if (r.id.kind != StepKind::TokenIds || !ids->empty()) return;
      for (std::size_t i = 0; i < element_count(r.shape); ++i) ids->push_back(static_cast<std::size_t>(r.data[i]));
    });
  const Tensor p = run_model(model, run, trace);  // (B?,S,V)
  const std::size_t V = p.shape.back(), S = p.shape[p.rank() - 2];
  Tensor first = Tensor::uninitialized({S, V}, {"S", "V"});
  std::copy(p.data.begin(), p.data.begin() + static_cast<std::ptrdiff_t>(S * V), first.data.begin());
  if (ids && ids->size() > S) ids->resize(S);
  return first;
}

}  // namespace

InductionLesson induction_lesson(const Model& model, const RunInput& input) {
  std::vector<std::size_t> ids;
  const Tensor plain = probabilities_with(model, input, Ablation{}, &ids);
  const std::vector<CopyTarget> targets = copy_targets(ids);
  const std::vector<std::size_t> never = model.vocab.never_written_ids();
  InductionLesson lesson;
  lesson.positions = targets.size();
  const auto add = [&](const Ablation& ablation, const Tensor& probabilities) {
    const CopyScore score = score_copies(probabilities, targets, never);
    lesson.ablations.push_back({ablation.heads, score.right, score.mean_p});
  };
  add(Ablation{}, plain);
  const std::size_t layers = std::max(model.encoder.size(), model.decoder.size()), H = model.config.num_heads;
  std::vector<std::string> specs;
  for (std::size_t l = 0; l < layers; ++l)
    for (std::size_t h = 0; h < H; ++h) specs.push_back(fmt::format("{}.{}", l, h));
  for (std::size_t l = 0; H > 1 && l < layers; ++l) {
    std::string all;
    for (std::size_t h = 0; h < H; ++h) all += fmt::format("{}{}.{}", h ? "," : "", l, h);
    specs.push_back(all);
  }
  for (const std::string& spec : specs) {
    const Ablation ablation = parse_ablation(spec, false, model);
    add(ablation, probabilities_with(model, input, ablation, nullptr));
  }
  return lesson;
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
  if (!options.answer.empty()) {
    const std::size_t answer = single_token(model, options.answer, "--answer");
    if (walkthrough) walkthrough->lens_answer = answer;
  }
  if (options.ablate.empty()) return;
  const Ablation ablation = parse_ablation(options.ablate, options.ablate_mean, model);
  if (walkthrough && model.output.present) {
    walkthrough->unablated_probabilities = std::make_shared<const Tensor>(unablated_probabilities(model, input));
    walkthrough->ablation_label = ablation_label(ablation);
  }
  input.ablation = ablation;
}

}  // namespace attn::cli
