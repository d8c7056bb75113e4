// The shipped induction model (attn train --task induction, data/examples/trained_induction.json)
// does what docs/training.md and docs/heads.md say: it continues unseen repeated segments,
// and its heads form the circuit, measured by the head scores on its own attention weights.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis/head_scores.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "core/numpy_random.h"
#include "model/examples.h"

namespace {

attn::LoadedModel induction_model() {
  const attn::BundledExample& example = attn::find_example("trained_induction");
  return attn::load_model_text(example.json, "example trained_induction", attn::LoadOptions{});
}

// A segment of L distinct tokens a-z, drawn as np.random.seed(2023)'s permutation of 26,
// a stream the task's own (seed 5) never used.
std::vector<std::string> segment(attn::NumpyRandom& rng, std::size_t L) {
  const std::vector<std::size_t> order = rng.permutation(26);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < L; ++i) out.push_back(std::string(1, static_cast<char>('a' + order[i])));
  return out;
}

std::string joined(const std::vector<std::string>& tokens) {
  std::string s;
  for (const std::string& t : tokens) s += (s.empty() ? "" : " ") + t;
  return s;
}

// The model's most probable next token after `tokens` (never <PAD>, <UNK>, <BOS>).
std::string next_token(attn::LoadedModel& loaded, const std::vector<std::string>& tokens) {
  const attn::Model& model = loaded.model;
  attn::replace_source_text(model, loaded.input, joined(tokens), "test");
  attn::Trace trace(true);
  trace.keep_entries(false);
  const attn::Tensor probabilities = attn::run_model(model, loaded.input, trace);  // (S,V)
  const std::size_t V = model.vocab.size();
  const double* last = probabilities.data.data() + probabilities.size() - V;
  const std::vector<std::size_t> never = model.vocab.never_written_ids();
  std::size_t best = V;
  for (std::size_t v = 0; v < V; ++v)
    if (std::find(never.begin(), never.end(), v) == never.end() && (best == V || last[v] > last[best])) best = v;
  return model.vocab.token(best);
}

}  // namespace

TEST_CASE("the induction model continues unseen repeated segments greedily", "[analysis][induction]") {
  attn::LoadedModel model = induction_model();
  attn::NumpyRandom rng(2023);
  std::size_t right = 0, total = 0;
  for (std::size_t n = 0; n < 100; ++n) {
    const std::size_t L = 6 + n % 7;  // 6..12
    const std::vector<std::string> x = segment(rng, L);
    // <BOS> x1..xL x1, then the model's own tokens: x2..xL are the continuation
    std::vector<std::string> tokens = {"<BOS>"};
    tokens.insert(tokens.end(), x.begin(), x.end());
    tokens.push_back(x[0]);
    for (std::size_t i = 1; i < L; ++i) {
      const std::string next = next_token(model, tokens);
      right += next == x[i];
      ++total;
      tokens.push_back(next);
    }
  }
  INFO(right << " of " << total << " right");
  CHECK(right * 100 >= total * 95);
}

TEST_CASE("the induction model's heads: a previous-token head in layer 0, an induction head in layer 1",
          "[analysis][induction]") {
  attn::LoadedModel loaded = induction_model();
  const attn::Model& model = loaded.model;
  attn::NumpyRandom rng(7);
  std::vector<std::vector<double>> previous(2), induction(2), induction_2(2);  // [layer][head], summed
  const std::size_t sequences = 20, H = model.config.num_heads;
  for (auto* v : {&previous, &induction, &induction_2})
    for (auto& layer : *v) layer.assign(H, 0);
  for (std::size_t n = 0; n < sequences; ++n) {
    const std::vector<std::string> x = segment(rng, 6 + n % 7);
    std::vector<std::string> tokens = {"<BOS>"};
    for (int copy = 0; copy < 2; ++copy) tokens.insert(tokens.end(), x.begin(), x.end());
    attn::replace_source_text(model, loaded.input, joined(tokens), "test");
    attn::Trace trace(true);
    attn::run_model(model, loaded.input, trace);
    std::vector<std::size_t> ids;
    for (const std::string& t : tokens) ids.push_back(*model.vocab.find(t));
    for (const attn::TraceEntry& e : trace.entries()) {
      if (e.id.kind != attn::StepKind::AttentionWeights) continue;
      const std::size_t l = static_cast<std::size_t>(e.id.layer), S = tokens.size();
      for (std::size_t h = 0; h < H; ++h) {
        const attn::Tensor w = attn::reshaped(attn::take_index(e.tensor, 0, h), {S, S}, {"S", "S"});
        const attn::HeadScores s = attn::score_head(w, ids);
        previous[l][h] += *s.previous_token / sequences;
        induction[l][h] += *s.induction / sequences;
        induction_2[l][h] += *s.induction_2 / sequences;
      }
    }
  }
  const double best_previous = *std::max_element(previous[0].begin(), previous[0].end());
  const double best_induction = *std::max_element(induction[1].begin(), induction[1].end());
  INFO("layer 0 previous-token scores " << previous[0][0] << ", " << previous[0][1] << "; layer 1 induction (q+1) "
                                        << induction[1][0] << ", " << induction[1][1] << ", q+2 " << induction_2[1][0]
                                        << ", " << induction_2[1][1]);
  CHECK(best_previous >= 0.5);
  CHECK(best_induction >= 0.6);
}
