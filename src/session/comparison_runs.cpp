#include "session/comparison_runs.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/head_scores.h"
#include "attn/forward.h"
#include "attn/step_roles.h"
#include "forward/ablation.h"

namespace attn {

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
      if (!is_token_ids(r.id.kind) || !ids->empty()) return;
      for (std::size_t i = 0; i < element_count(r.shape); ++i) ids->push_back(static_cast<std::size_t>(r.data[i]));
    });
  const Tensor p = run_model(model, run, trace);  // (B?,S,V)
  const std::size_t V = p.shape.back(), S = p.shape[p.rank() - 2];
  Tensor first = Tensor::uninitialized({S, V}, {"S", "V"});
  std::copy(p.data.begin(), p.data.begin() + static_cast<std::ptrdiff_t>(S * V), first.data.begin());
  if (ids && ids->size() > S) ids->resize(S);
  return first;
}

// The heads the lesson zeroes: each head alone ("0.1"), then each layer's together.
std::vector<std::string> lesson_ablations(const Model& model) {
  const std::size_t layers = std::max(model.encoder.size(), model.decoder.size()), H = model.config.num_heads;
  std::vector<std::string> specs;
  for (std::size_t l = 0; l < layers; ++l)
    for (std::size_t h = 0; h < H; ++h) specs.push_back(fmt::format("{}.{}", l, h));
  for (std::size_t l = 0; H > 1 && l < layers; ++l) {
    std::string all;
    for (std::size_t h = 0; h < H; ++h) all += fmt::format("{}{}.{}", h ? "," : "", l, h);
    specs.push_back(all);
  }
  return specs;
}

}  // namespace

InductionLesson induction_lesson(const Session& session) {
  const Model& model = session.model();
  const RunInput& input = session.input();
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
  for (const std::string& spec : lesson_ablations(model)) {
    const Ablation ablation = parse_ablation(spec, false, model);
    add(ablation, probabilities_with(model, input, ablation, nullptr));
  }
  return lesson;
}

Tensor unablated_probabilities(const Session& session) {
  RunInput plain = session.input();
  plain.ablation = Ablation{};
  plain.lens = false;
  Trace trace(!plain.batched);
  trace.keep_entries(false);
  return run_model(session.model(), plain, trace);
}

}  // namespace attn
