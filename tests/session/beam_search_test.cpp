// Beam search (src/session/beam_search.cpp) against transformers' beam search reproduced in
// float64 by tests/reference/make_beam_cases.py on the committed tiny checkpoints (Marian,
// BART, GPT-2): every step's best candidates (beam, token, score), what became of each (the
// next beam, a finished hypothesis, skipped for its rank, not needed), the beams kept, the
// hypotheses each step finished, and the answer with its length-penalized score. attn runs
// each beam through its own KV cache; the reference runs the whole prefix every step.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "arch/checkpoint.h"
#include "attn/trace.h"
#include "checkpoint/json_file.h"
#include "session/beam_search.h"
#include "session/session.h"
#include "tokenizers/word_tokenizer.h"

namespace {

const std::string kReference = std::string(ATTN_SOURCE_DIR) + "/tests/reference/";

std::vector<std::string> names_of(const attn::Json& ids) {
  std::vector<std::string> out;
  for (const auto& id : ids) out.push_back("w" + std::to_string(id.get<std::size_t>()));
  return out;
}

// The run's checkpoint with placeholder tokens w0, w1, ... and the run's ids as its input.
attn::LoadedModel model_of(const attn::Json& run) {
  attn::CheckpointModel checkpoint = attn::load_hf_model(kReference + run.at("case").get<std::string>());
  attn::LoadedModel loaded;
  loaded.model = std::move(checkpoint.model);
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < checkpoint.vocab_size; ++i) tokens.push_back("w" + std::to_string(i));
  loaded.model.vocab = attn::Vocabulary(tokens);
  loaded.model.tokenizer = std::make_shared<const attn::WordTokenizer>(loaded.model.vocab);
  // what the one door (attn::load_model) sets from the checkpoint's config
  attn::CheckpointSource& origin = loaded.model.checkpoint;
  origin.folder = checkpoint.folder;
  origin.architecture = checkpoint.architecture;
  origin.eos_token_ids = checkpoint.eos_token_ids;
  origin.decoder_start_id = checkpoint.decoder_start_id;
  origin.never_generated = checkpoint.never_generated;
  origin.max_positions = checkpoint.max_positions;
  origin.tokenizer_size = checkpoint.vocab_size;
  loaded.input.batched = false;
  if (run.at("kind") == "seq2seq") {
    loaded.input.source_tokens.tokens = {names_of(run.at("source"))};
    loaded.input.target_tokens.tokens = {names_of(run.at("prefix"))};
  } else {
    loaded.input.source_tokens.tokens = {names_of(run.at("prefix"))};
  }
  return loaded;
}

attn::BeamRules rules_of(const attn::Json& run) {
  attn::BeamRules rules;
  rules.beams = run.at("beams").get<std::size_t>();
  rules.length_penalty = run.at("length_penalty").get<double>();
  const attn::Json& early = run.at("early_stopping");
  rules.early_stopping = early.is_string()   ? attn::EarlyStopping::Never
                         : early.get<bool>() ? attn::EarlyStopping::AtOnce
                                             : attn::EarlyStopping::Heuristic;
  return rules;
}

// A reference number: JSON has none for -inf, which the reference writes as "-inf".
double number(const attn::Json& x) {
  return x.is_string() && x.get<std::string>() == "-inf" ? -std::numeric_limits<double>::infinity() : x.get<double>();
}

// Scores within 1e-12 of their size (the first step's -1e9 beams carry 1e9's rounding).
bool near(double a, double b) {
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::abs(a - b) <= 1e-12 * std::max(1.0, std::abs(b));
}

// The reference's whole sequences without the prompt.
std::vector<std::size_t> after_prompt(const attn::Json& tokens, std::size_t prompt) {
  const auto all = tokens.get<std::vector<std::size_t>>();
  return {all.begin() + static_cast<std::ptrdiff_t>(std::min(prompt, all.size())), all.end()};
}

std::string fate_of(const attn::BeamCandidate& c) {
  switch (c.fate) {
    case attn::BeamCandidate::Fate::Kept:
      return "beam " + std::to_string(c.kept_as);
    case attn::BeamCandidate::Fate::Finished:
      return "finished";
    case attn::BeamCandidate::Fate::Skipped:
      return "skipped";
    case attn::BeamCandidate::Fate::Unused:
      return "unused";
  }
  return "";
}

void check_step(const attn::BeamStep& step, const attn::Json& expected, std::size_t prompt) {
  const attn::Json& candidates = expected.at("candidates");
  REQUIRE(step.candidates.size() == candidates.size());
  for (std::size_t r = 0; r < candidates.size(); ++r) {
    INFO("candidate " << r);
    const attn::BeamCandidate& c = step.candidates[r];
    CHECK(c.beam == candidates[r].at("beam").get<std::size_t>());
    CHECK(c.token == candidates[r].at("token").get<std::size_t>());
    CHECK(near(c.score, number(candidates[r].at("score"))));
    CHECK(fate_of(c) == expected.at("fate")[r].get<std::string>());
  }
  const attn::Json& finished = expected.at("finished");
  REQUIRE(step.finished.size() == finished.size());
  for (std::size_t i = 0; i < finished.size(); ++i) {
    CHECK(step.finished[i].ids == after_prompt(finished[i].at("tokens"), prompt));
    CHECK(step.finished[i].length == finished[i].at("generated_len").get<std::size_t>());
    CHECK(near(step.finished[i].sum, number(finished[i].at("sum"))));
    CHECK(near(step.finished[i].score, number(finished[i].at("score"))));
  }
}

}  // namespace

TEST_CASE("beam search agrees with transformers' beam search, step by step", "[session][reference][beams]") {
  const attn::Json cases = attn::read_json_object_file(kReference + "beam_search/cases.json");
  std::size_t r = 0;
  for (const attn::Json& run : cases.at("runs")) {
    DYNAMIC_SECTION("run " << r++ << ": " << run.at("case").get<std::string>() << ", " << run.at("beams") << " beams, "
                           << run.at("note").get<std::string>()) {
      attn::Session session(model_of(run));
      attn::StopRules stop;
      stop.max_new_tokens = run.at("max_new_tokens").get<std::size_t>();
      attn::BeamSearch search(session, rules_of(run), stop);
      const std::size_t prompt = run.at("prefix").size();
      REQUIRE(search.generation().tokens().size() == prompt);
      attn::Trace trace(true);
      trace.keep_entries(false);
      search.generation().prefill(trace);
      search.start();
      std::size_t k = 0;
      const attn::Json& steps = run.at("steps");
      search.run([&](const attn::BeamStep& step) {
        INFO("step " << k);
        REQUIRE(k < steps.size());
        check_step(step, steps[k], prompt);
        if (!step.done) {
          const attn::Json& beams = steps[k].at("beams");
          REQUIRE(search.beams().size() == beams.size());
          for (std::size_t b = 0; b < beams.size(); ++b) {
            CHECK(search.beams()[b].ids == after_prompt(beams[b].at("tokens"), prompt));
            CHECK(near(search.beams()[b].score, number(beams[b].at("score"))));
          }
        }
        ++k;
      });
      CHECK(k == steps.size());
      const attn::Json& hypotheses = run.at("hypotheses");
      REQUIRE(search.hypotheses().size() == hypotheses.size());
      for (std::size_t i = 0; i < hypotheses.size(); ++i) {
        CHECK(search.hypotheses()[i].ids == after_prompt(hypotheses[i].at("tokens"), prompt));
        CHECK(near(search.hypotheses()[i].score, number(hypotheses[i].at("score"))));
      }
      // The answer: the best hypothesis, the first end token after it when one ended it.
      std::vector<std::size_t> answer = search.best().ids;
      if (search.best().ended) answer.push_back(run.at("eos").at(0).get<std::size_t>());
      CHECK(answer == after_prompt(run.at("result").at("tokens"), prompt));
      CHECK(near(search.best().score, number(run.at("result").at("score"))));
    }
  }
}
