// The shipped induction model (attn train --task induction, data/examples/trained_induction.json)
// does what docs/training.md and docs/heads.md say: it continues unseen repeated segments,
// and its heads form the circuit, measured by the head scores on its own attention weights.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "trace_lookup.h"

#include "analysis/head_scores.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "core/numpy_random.h"
#include "core/top_k.h"
#include "model/examples.h"
#include "model/json_reader.h"

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

namespace {

// How the model does on the copyable positions of 20 unseen repeats "<BOS> x1..xL x1..xL"
// (np.random.seed(7)'s permutations, L = 6 + n % 7: 157 positions), with `ablation`: how many
// greedy picks are right, and the mean probability of the right token.
struct CopyScore {
  std::size_t right = 0, positions = 0;
  double mean_p = 0;
};

CopyScore copy_score(attn::LoadedModel& loaded, const attn::Ablation& ablation) {
  const attn::Model& model = loaded.model;
  attn::NumpyRandom rng(7);
  const std::vector<std::size_t> never = model.vocab.never_written_ids();
  const std::size_t V = model.vocab.size();
  CopyScore score;
  double p_sum = 0;
  for (std::size_t n = 0; n < 20; ++n) {
    const std::vector<std::string> x = segment(rng, 6 + n % 7);
    const std::size_t L = x.size();
    std::vector<std::string> tokens = {"<BOS>"};
    for (int copy = 0; copy < 2; ++copy) tokens.insert(tokens.end(), x.begin(), x.end());
    attn::replace_source_text(model, loaded.input, joined(tokens), "test");
    loaded.input.ablation = ablation;
    attn::Trace trace(true);
    trace.keep_entries(false);
    const attn::Tensor p = attn::run_model(model, loaded.input, trace);  // (1,S,V)
    for (std::size_t i = 1; i < L; ++i) {
      const std::size_t position = L + i, want = *model.vocab.find(x[i]);  // the second copy's x_i
      const double* row = p.data.data() + position * V;
      std::size_t best = V;
      for (std::size_t v = 0; v < V; ++v)
        if (std::find(never.begin(), never.end(), v) == never.end() && (best == V || row[v] > row[best])) best = v;
      score.right += best == want;
      p_sum += row[want];
      ++score.positions;
    }
  }
  score.mean_p = p_sum / static_cast<double>(score.positions);
  return score;
}

attn::Ablation heads_of(const attn::Json& heads, bool mean) {
  attn::Ablation a;
  a.mean = mean;
  for (const attn::Json& h : heads) a.heads.push_back({attn::Stack::Decoder, h[0].get<int>(), h[1].get<std::size_t>()});
  return a;
}

}  // namespace

TEST_CASE("ablating the induction circuit: each head's share, measured and as NumPy recomputes it",
          "[analysis][induction][ablation]") {
  attn::LoadedModel loaded = induction_model();
  const attn::Json doc =
      attn::parse_json(attn::read_text_file(ATTN_SOURCE_DIR "/tests/reference/ablation_cases.json"), "ablation_cases");
  REQUIRE(doc["ablations"].size() == 12);
  std::vector<CopyScore> zeroed;
  for (const attn::Json& c : doc["ablations"]) {
    const attn::Ablation ablation = heads_of(c["heads"], c["mean"].get<bool>());
    INFO("heads " << c["heads"].dump() << (ablation.mean ? " by their mean" : " zeroed"));
    const CopyScore s = copy_score(loaded, ablation);
    CHECK(s.positions == c["positions"].get<std::size_t>());
    CHECK(s.right == c["right"].get<std::size_t>());
    CHECK_THAT(s.mean_p, Catch::Matchers::WithinAbs(c["mean_p"].get<double>(), 1e-12));
    if (!ablation.mean) zeroed.push_back(s);
  }
  // The figures docs/heads.md teaches (zeroed; the order of the reference's list): none,
  // L0H0, L0H1 (previous-token), L1H0, L1H1, both of layer 1.
  REQUIRE(zeroed.size() == 6);
  const auto percent = [](const CopyScore& s) { return 100.0 * s.right / s.positions; };
  CHECK(zeroed[0].positions == 157);
  CHECK(zeroed[0].right == 157);
  CHECK_THAT(zeroed[0].mean_p, Catch::Matchers::WithinAbs(0.9957, 5e-5));
  CHECK(percent(zeroed[2]) < 15);  // without the previous-token head the circuit breaks
  CHECK(percent(zeroed[5]) < 10);  // and without both induction heads
  CHECK(zeroed[1].right > zeroed[2].right);
}

TEST_CASE("the logit lens of the induction model: each position's top token per layer, as NumPy has it",
          "[analysis][induction][lens]") {
  attn::LoadedModel loaded = induction_model();
  const attn::Json doc =
      attn::parse_json(attn::read_text_file(ATTN_SOURCE_DIR "/tests/reference/ablation_cases.json"), "ablation_cases");
  const attn::Json& lens = doc["lens"];
  const auto sequence = lens["sequence"].get<std::vector<std::string>>();
  attn::replace_source_text(loaded.model, loaded.input, joined(sequence), "test");
  loaded.input.lens = true;
  attn::Trace trace(true);
  attn::run_model(loaded.model, loaded.input, trace);
  const std::vector<std::size_t> never = loaded.model.vocab.never_written_ids();
  const std::size_t V = loaded.model.vocab.size();
  for (std::size_t l = 0; l < 2; ++l) {
    const attn::TraceEntry* e = find_entry(trace, "lens." + std::to_string(l) + ".probabilities");
    REQUIRE(e);
    for (std::size_t i = 0; i < sequence.size(); ++i) {
      const auto top = attn::top_tokens(e->tensor.data.data() + i * V, V, 1, never);
      INFO("layer " << l << ", position " << i);
      CHECK(loaded.model.vocab.token(top[0].id) == lens["top_tokens"][i][l].get<std::string>());
    }
    if (l == 0)
      CHECK_THAT(*std::max_element(e->tensor.data.begin() + 3 * V, e->tensor.data.begin() + 4 * V),
                 Catch::Matchers::WithinAbs(lens["layer0_p_max_position_3"].get<double>(), 1e-12));
  }
}
