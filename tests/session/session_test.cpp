// The session (src/session/) runs what the commands used to run themselves, and must run it
// exactly as a plain forward pass does: generation against full runs over the prefix (the
// cache and the stop rules), ablation's comparison run against a run of the unablated input,
// and the head scores against analysis's scores of the weights a plain run records.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "analysis/head_scores.h"
#include "attn/forward.h"
#include "attn/generate.h"
#include "attn/model_file.h"
#include "core/numpy_random.h"
#include "model/examples.h"
#include "session/comparison_runs.h"
#include "session/generation.h"
#include "session/head_scores_run.h"
#include "session/session.h"

namespace {

attn::ModelChoice example(const std::string& name, const std::string& text) {
  attn::ModelChoice choice;
  choice.example = name;
  choice.text = text;
  return choice;
}

// Generation done the slow way: a full run over the whole prefix for every token, the next
// token chosen from its last row's logits as attn generate chooses (greedy, or drawn from
// np.random.RandomState(seed)), until `stop`, `n` tokens or the learned position table's end.
std::vector<std::string> generate_by_full_runs(const std::string& prompt, const std::string& stop, std::size_t n,
                                               const attn::SamplingOptions& sampling, std::uint32_t seed,
                                               bool* table_ended) {
  attn::LoadedModel loaded = attn::load_model_text(attn::find_example("gpt_tiny").json, "gpt_tiny");
  const attn::Model& model = loaded.model;
  const std::vector<std::size_t> never = model.vocab.never_written_ids();
  attn::NumpyRandom rng(seed);
  std::vector<std::string> generated;
  std::string text = prompt;
  *table_ended = false;
  while (generated.size() < n) {
    attn::replace_source_text(model, loaded.input, text, "test");
    attn::Trace trace(true);
    attn::run_model(model, loaded.input, trace);
    const attn::TraceEntry* logits = nullptr;
    for (const auto& e : trace.entries())
      if (e.id.kind == attn::StepKind::Logits) logits = &e;
    REQUIRE(logits);
    const std::size_t V = model.vocab.size(), S = logits->tensor.dim(0);  // (S,V)
    const attn::SamplingResult choice =
        attn::choose_next_token(logits->tensor.data.data() + (S - 1) * V, V, sampling, never, &rng);
    if (model.vocab.token(choice.id) == stop) break;
    generated.push_back(model.vocab.token(choice.id));
    text += " " + generated.back();
    // The prefix's S positions fill the table: no row for the token just chosen.
    if (generated.size() < n && S >= model.config.max_len) {
      *table_ended = true;
      break;
    }
  }
  return generated;
}

// The session's generation of up to `n` tokens after "<BOS> the cat", until `stop`.
struct Generated {
  std::vector<std::string> tokens;
  std::string note;       // why it ran out of positions, if it did
  std::size_t draws = 0;  // the random numbers drawn
};
Generated generate_in_session(const std::string& stop, std::size_t n, const attn::SamplingChoice& sampling) {
  attn::Session session(example("gpt_tiny", "<BOS> the cat"), attn::ReadingChoice{}, attn::LoadOptions{});
  attn::StopRules rules;
  rules.max_new_tokens = n;
  rules.stop = stop;
  attn::Generation generation(session, sampling, rules);
  attn::Trace prompt(true);
  prompt.keep_entries(false);
  generation.prefill(prompt);
  Generated out;
  std::size_t chosen = 0;
  attn::Generation::Observer observer;
  observer.chose = [&](const attn::SamplingResult& choice, std::size_t number, std::size_t draws) {
    CHECK(number == ++chosen);
    CHECK(draws == out.draws);
    if (choice.draw) ++out.draws;
  };
  observer.ran_out = [&](const std::string& why) { out.note = why; };
  generation.generate(observer);
  CHECK_FALSE(generation.step(observer));  // over: nothing more is chosen
  CHECK(generation.tokens().size() == 3 + generation.generated().size());
  out.tokens = generation.generated();
  return out;
}

}  // namespace

TEST_CASE("a session's generation chooses as a full run over the prefix would, token after token",
          "[session][generate]") {
  // gpt_tiny's random weights write "ran mat <EOS> ..." greedily: <EOS> ends it after two
  // tokens; with --stop dog (never chosen) the 32 rows of its position table end it after 30.
  for (const std::string stop : {"<EOS>", "dog"})
    for (const std::size_t n : {std::size_t{2}, std::size_t{40}}) {
      bool table_ended = false;
      const std::vector<std::string> expected = generate_by_full_runs("<BOS> the cat", stop, n, {}, 0, &table_ended);
      const Generated got = generate_in_session(stop, n, attn::SamplingChoice{});
      CHECK(got.tokens == expected);
      CHECK(got.tokens.size() == (n == 2 ? 2 : stop == "dog" ? 30 : 2));
      CHECK(got.draws == 0);  // greedy draws nothing
      // The table's end is reported; -n and the stop token end silently.
      CHECK(table_ended == (n == 40 && stop == "dog"));
      CHECK(got.note == (table_ended ? "the position table has 32 rows: no room for more" : ""));
    }
  // Sampled: temperature 0.8, top-k 5, top-p 0.9 from np.random.RandomState(7), one draw a token.
  bool table_ended = false;
  const std::vector<std::string> sampled =
      generate_by_full_runs("<BOS> the cat", "dog", 12, {0.8, 5, 0.9}, 7, &table_ended);
  const Generated got = generate_in_session("dog", 12, attn::SamplingChoice{0.8, 5, 0.9, 7});
  CHECK(got.tokens == sampled);
  CHECK(got.tokens.size() == 12);
  CHECK(got.draws == 12);
}

TEST_CASE("generation refuses a --stop token the vocabulary lacks, and -n 0", "[session][generate]") {
  attn::Session session(example("gpt_tiny", ""), attn::ReadingChoice{}, attn::LoadOptions{});
  attn::StopRules rules;
  rules.stop = "zzz";
  CHECK_THROWS_WITH(attn::Generation(session, attn::SamplingChoice{}, rules),
                    "--stop: \"zzz\" is not in the vocabulary of example gpt_tiny, so it could never be generated");
  rules = attn::StopRules{};
  rules.max_new_tokens = 0;
  CHECK_THROWS_WITH(attn::check_generation_choices(attn::SamplingChoice{}, rules),
                    "--max-new-tokens: expected at least 1, found 0");
}

TEST_CASE("ablation's comparison run is the session's input run without the ablation", "[session][ablation]") {
  attn::ReadingChoice reading;
  reading.ablate = "0.1";
  attn::Session ablated(example("gpt_tiny", "<BOS> the cat sat"), reading, attn::LoadOptions{});
  ablated.apply_reading();
  REQUIRE(ablated.input().ablation.heads.size() == 1);
  const attn::Tensor unablated = attn::unablated_probabilities(ablated);
  CHECK(ablated.input().ablation.heads.size() == 1);  // the session's own input keeps it

  attn::Session plain(example("gpt_tiny", "<BOS> the cat sat"), attn::ReadingChoice{}, attn::LoadOptions{});
  attn::Trace trace(true);
  const attn::Tensor expected = plain.run(trace);
  CHECK(unablated.shape == expected.shape);
  CHECK(unablated.data == expected.data);  // the same run, bit for bit
  attn::Trace ablated_trace(true);
  CHECK(ablated.run(ablated_trace).data != expected.data);
}

TEST_CASE("attn heads' scores are analysis's scores of the weights a plain run records", "[session][heads]") {
  const std::string text = "<BOS> a b c d a b c d";
  attn::Session session(example("trained_induction", text), attn::ReadingChoice{}, attn::LoadOptions{});
  attn::check_one_sequence(session);
  const attn::HeadsReport report = attn::measure_heads(session, attn::Tensor{});
  CHECK(report.sequence == std::vector<std::string>{"<BOS>", "a", "b", "c", "d", "a", "b", "c", "d"});
  CHECK_FALSE(report.target);
  CHECK(report.changes.empty());

  attn::LoadedModel loaded = attn::load_model_text(attn::find_example("trained_induction").json, "induction");
  attn::replace_source_text(loaded.model, loaded.input, text, "test");
  attn::Trace trace(true);
  attn::run_model(loaded.model, loaded.input, trace);
  std::vector<std::size_t> ids;
  for (const auto& e : trace.entries())
    if (e.id.kind == attn::StepKind::TokenIds)
      for (const double v : e.tensor.data) ids.push_back(static_cast<std::size_t>(v));
  std::size_t compared = 0;
  for (const auto& e : trace.entries()) {
    if (e.id.kind != attn::StepKind::AttentionWeights) continue;
    const std::size_t H = e.tensor.dim(0), S = e.tensor.dim(1);
    for (std::size_t h = 0; h < H; ++h) {
      const attn::HeadScores expected =
          attn::score_head(attn::reshaped(attn::take_index(e.tensor, 0, h), {S, S}, {"S", "S"}), ids);
      const attn::ScoredHead& got = report.heads.at(compared++);
      CHECK(got.block == "decoder.self_attention");
      CHECK(got.layer == e.id.layer);
      CHECK(got.head == h);
      for (const std::string& name : attn::head_score_names())
        CHECK(attn::score_named(got.scores, name) == attn::score_named(expected, name));
    }
  }
  CHECK(compared == report.heads.size());
  CHECK(compared == 4);  // 2 layers of 2 heads
}
