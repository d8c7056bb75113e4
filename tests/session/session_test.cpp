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
#include "attn/model_file.h"
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

// Greedy generation done the slow way: a full run over the whole prefix for every token, its
// last row's most probable token (never <PAD>, <UNK>, <BOS>), until <EOS>, `n` tokens or the
// learned position table's end.
std::vector<std::string> greedy_by_full_runs(const std::string& prompt, std::size_t n, bool* table_ended) {
  attn::LoadedModel loaded = attn::load_model_text(attn::find_example("gpt_tiny").json, "gpt_tiny");
  const attn::Model& model = loaded.model;
  std::vector<std::string> generated;
  std::string text = prompt;
  *table_ended = false;
  while (generated.size() < n) {
    attn::replace_source_text(model, loaded.input, text, "test");
    attn::Trace trace(true);
    trace.keep_entries(false);
    const attn::Tensor p = attn::run_model(model, loaded.input, trace);  // (S,V)
    const std::size_t V = model.vocab.size();
    const double* last = p.data.data() + p.size() - V;
    const std::vector<std::size_t> never = model.vocab.never_written_ids();
    std::size_t best = V;
    for (std::size_t v = 0; v < V; ++v)
      if (std::find(never.begin(), never.end(), v) == never.end() && (best == V || last[v] > last[best])) best = v;
    if (model.vocab.token(best) == "<EOS>") break;
    generated.push_back(model.vocab.token(best));
    text += " " + generated.back();
    // The prefix's S positions fill the table: no row for the token just chosen.
    if (generated.size() < n && p.dim(0) >= model.config.max_len) {
      *table_ended = true;
      break;
    }
  }
  return generated;
}

}  // namespace

TEST_CASE("a session's greedy generation is a full run's most probable token at every step", "[session][generate]") {
  bool table_ended = false;
  const std::vector<std::string> expected = greedy_by_full_runs("<BOS> the cat", 40, &table_ended);
  REQUIRE(expected.size() >= 3);
  for (const std::size_t n : {std::size_t{2}, std::size_t{40}}) {
    attn::Session session(example("gpt_tiny", "<BOS> the cat"), attn::ReadingChoice{}, attn::LoadOptions{});
    attn::StopRules rules;
    rules.max_new_tokens = n;
    attn::Generation generation(session, attn::SamplingChoice{}, rules);
    attn::Trace prompt(true);
    prompt.keep_entries(false);
    generation.prefill(prompt);
    std::string note;
    std::size_t chosen = 0;
    attn::Generation::Observer observer;
    observer.chose = [&](const attn::SamplingResult& choice, std::size_t number, std::size_t draws) {
      ++chosen;
      CHECK(number == chosen);
      CHECK(draws == 0);  // greedy draws nothing
      CHECK_FALSE(choice.draw);
    };
    observer.ran_out = [&](const std::string& why) { note = why; };
    generation.generate(observer);
    const std::vector<std::string> first_n(
        expected.begin(), expected.begin() + static_cast<std::ptrdiff_t>(std::min(n, expected.size())));
    CHECK(generation.generated() == first_n);
    CHECK(generation.tokens().size() == 3 + first_n.size());
    // The table's end is reported; -n and <EOS> end silently.
    CHECK(note == (n == 40 && table_ended ? "the position table has 32 rows: no room for more" : ""));
    CHECK(generation.decoded_text().substr(0, expected[0].size()) == expected[0]);
  }
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
