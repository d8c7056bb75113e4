#include "session/beam_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/step_variants.h"
#include "attn/trace.h"

namespace attn {

namespace {

// transformers' starting score of every beam but the first: the first step reads the same
// prompt N times, and only beam 0's candidates may lead.
constexpr double kStartingScore = -1e9;

// log_softmax of one row of V logits (torch's: x - max - log(sum(exp(x - max)))), then the
// never-written tokens at -inf (transformers' bad_words_ids processor runs after it).
std::vector<double> log_probabilities(const std::vector<double>& logits, const std::vector<std::size_t>& never) {
  const double largest = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (const double x : logits) sum += std::exp(x - largest);
  const double log_sum = std::log(sum);
  std::vector<double> out(logits.size());
  for (std::size_t t = 0; t < logits.size(); ++t) out[t] = logits[t] - largest - log_sum;
  for (const std::size_t t : never)
    if (t < out.size()) out[t] = -std::numeric_limits<double>::infinity();
  return out;
}

}  // namespace

void check_beam_rules(const BeamRules& rules, const SamplingChoice& sampling, const StopRules& stop) {
  if (rules.beams == 0) throw InputError("--beams", "", "expected at least 1 (1: greedy search), found 0");
  if (rules.beams > 64)
    throw InputError("--beams", "", fmt::format("expected at most 64 beams, found {}", rules.beams));
  if (!std::isfinite(rules.length_penalty))
    throw InputError("--length-penalty", "", fmt::format("expected a finite number, found {}", rules.length_penalty));
  if (rules.beams == 1) return;
  if (sampling.temperature != 0 || sampling.top_k != 0 || sampling.top_p != 1)
    throw InputError("--beams", "",
                     "expected greedy choices beside beam search, found a sampling option (--temperature, --top-k, "
                     "--top-p): beam search keeps the most probable sequences and draws nothing");
  if (stop.no_cache)
    throw InputError("--no-cache", "", "expected the KV cache beside --beams, found --no-cache: each beam has its own");
}

BeamSearch::BeamSearch(Session& session, const BeamRules& rules, const StopRules& stop, RunPlan plan)
    : session_(session), rules_(rules) {
  plan.beams = rules.beams;
  generation_ = std::make_unique<Generation>(session, SamplingChoice{}, stop, plan);
  ends_ = generation_->eos_ids();
  if (generation_->stop_id() && std::find(ends_.begin(), ends_.end(), *generation_->stop_id()) == ends_.end())
    ends_.push_back(*generation_->stop_id());
  // A step's token is chosen from the last position's logits and needs no position of its
  // own: at most -n steps, and one more than the positions left after the prompt.
  const Model& model = session.model();
  const std::size_t prompt = generation_->tokens().size();
  limit_ = stop.max_new_tokens;
  const auto cap = [&](std::size_t positions) {
    limit_ = std::min(limit_, positions >= prompt ? positions - prompt + 1 : 1);
  };
  if (reads_position_table(model.config.positional_encoding)) cap(model.config.max_len);
  if (model.checkpoint.present() && model.checkpoint.max_positions) cap(model.checkpoint.max_positions);
}

BeamSearch::~BeamSearch() = default;

void BeamSearch::start() {
  decoders_.clear();
  beams_.clear();
  for (std::size_t b = 0; b < rules_.beams; ++b) {
    decoders_.push_back(std::make_unique<KvCacheDecoder>(generation_->decoder()));
    beams_.push_back(Beam{{}, b == 0 ? 0.0 : kStartingScore});
  }
  over_ = false;
}

// Every beam followed by every token; the best max(2, 1 + end tokens) x N by score (the
// lower beam-major index first on ties, beam * V + token), best first.
std::vector<BeamCandidate> BeamSearch::best_candidates() const {
  const std::size_t N = beams_.size();
  const std::size_t V = decoders_[0]->logits().size();
  std::vector<double> scores(N * V), log_p(N * V);
  for (std::size_t b = 0; b < N; ++b) {
    const std::vector<double> row = log_probabilities(decoders_[b]->logits(), generation_->never_ids());
    for (std::size_t t = 0; t < V; ++t) {
      log_p[b * V + t] = row[t];
      scores[b * V + t] = row[t] + beams_[b].score;
    }
  }
  const std::size_t keep = std::min(N * V, std::max<std::size_t>(2, 1 + ends_.size()) * N);
  std::vector<std::size_t> order(N * V);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
      [&](std::size_t a, std::size_t b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
  std::vector<BeamCandidate> out(keep);
  for (std::size_t r = 0; r < keep; ++r) {
    out[r].beam = order[r] / V;
    out[r].token = order[r] % V;
    out[r].log_p = log_p[order[r]];
    out[r].score = scores[order[r]];
  }
  return out;
}

BeamHypothesis BeamSearch::hypothesis(std::vector<std::size_t> ids, double sum, bool ended) const {
  const double score = sum / std::pow(static_cast<double>(steps_), rules_.length_penalty);
  return BeamHypothesis{std::move(ids), sum, steps_, score, ended};
}

// transformers' BeamHypotheses.add: kept while fewer than N, or when better than the worst
// kept (which then goes: the lowest score, the earlier added on ties).
void BeamSearch::add_hypothesis(BeamHypothesis h) {
  const std::size_t N = rules_.beams;
  if (hypotheses_.size() >= N && !(h.score > worst_)) return;
  hypotheses_.push_back(std::move(h));
  if (hypotheses_.size() <= N) {
    worst_ = std::min(hypotheses_.back().score, worst_);
    return;
  }
  std::vector<std::size_t> order(hypotheses_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return hypotheses_[a].score < hypotheses_[b].score; });
  worst_ = hypotheses_[order[1]].score;
  hypotheses_.erase(hypotheses_.begin() + static_cast<std::ptrdiff_t>(order[0]));
}

// transformers' BeamHypotheses.is_done, with the length counted after the prompt.
bool BeamSearch::is_done(double best_score) const {
  if (hypotheses_.size() < rules_.beams) return false;
  const double p = rules_.length_penalty;
  switch (rules_.early_stopping) {
    case EarlyStopping::AtOnce:
      return true;
    case EarlyStopping::Heuristic:
      return worst_ >= best_score / std::pow(static_cast<double>(steps_), p);
    case EarlyStopping::Never:
      // transformers' max_length - the prompt: -n
      return worst_ >=
             best_score / std::pow(static_cast<double>(p > 0 ? generation_->rules().max_new_tokens : steps_), p);
  }
  return false;
}

bool BeamSearch::step(const std::function<void(const BeamStep&)>& observer) {
  if (over_) return false;
  BeamStep step;
  step.number = ++steps_;
  step.from = beams_;
  step.candidates = best_candidates();
  const std::size_t N = rules_.beams;
  std::vector<Beam> next;
  std::vector<std::size_t> from;
  for (std::size_t r = 0; r < step.candidates.size() && next.size() < N; ++r) {
    BeamCandidate& c = step.candidates[r];
    const Beam& beam = beams_[c.beam];
    if (std::find(ends_.begin(), ends_.end(), c.token) != ends_.end()) {
      c.fate = r < N ? BeamCandidate::Fate::Finished : BeamCandidate::Fate::Skipped;
      if (r < N) {
        step.finished.push_back(hypothesis(beam.ids, c.score, true));
        add_hypothesis(step.finished.back());
      }
      continue;
    }
    c.fate = BeamCandidate::Fate::Kept;
    c.kept_as = next.size();
    next.push_back(Beam{beam.ids, c.score});
    next.back().ids.push_back(c.token);
    from.push_back(c.beam);
  }
  if (next.size() < N)
    throw InternalError(
        fmt::format("beam search: {} of {} beams kept from {} candidates", next.size(), N, step.candidates.size()));
  done_ = done_ || is_done(step.candidates[0].score);
  beams_ = std::move(next);
  over_ = done_ || steps_ >= limit_;
  step.done = over_;
  if (over_) finish();
  if (observer) observer(step);
  if (!over_) feed(from);
  return !over_;
}

// Beam i continues beam from[i]: its cache (copied when two beams share a parent), then its
// new token through it.
void BeamSearch::feed(const std::vector<std::size_t>& from) {
  std::vector<std::size_t> uses(decoders_.size(), 0);
  for (const std::size_t b : from) ++uses[b];
  std::vector<std::unique_ptr<KvCacheDecoder>> next(from.size());
  for (std::size_t i = 0; i < from.size(); ++i) {
    if (--uses[from[i]] == 0)
      next[i] = std::move(decoders_[from[i]]);
    else
      next[i] = std::make_unique<KvCacheDecoder>(*decoders_[from[i]]);
  }
  decoders_ = std::move(next);
  for (std::size_t i = 0; i < beams_.size(); ++i) {
    Trace trace(true);
    trace.keep_entries(false);
    decoders_[i]->step(beams_[i].ids.back(), trace);
  }
}

// The open beams join the hypotheses unless the search stopped early; best first (on equal
// scores the later added first, as transformers' sorted(...).pop() takes it).
void BeamSearch::finish() {
  if (!done_)
    for (const Beam& beam : beams_) add_hypothesis(hypothesis(beam.ids, beam.score, false));
  std::stable_sort(hypotheses_.begin(), hypotheses_.end(),
                   [](const BeamHypothesis& a, const BeamHypothesis& b) { return a.score < b.score; });
  std::reverse(hypotheses_.begin(), hypotheses_.end());
}

void BeamSearch::run(const std::function<void(const BeamStep&)>& observer) {
  while (step(observer)) {
  }
}

const BeamHypothesis& BeamSearch::best() const {
  if (hypotheses_.empty()) throw InternalError("beam search: no hypothesis before the search is over");
  return hypotheses_.front();
}

std::string BeamSearch::decoded_text() const { return text_of(best().ids); }

std::string BeamSearch::text_of(const std::vector<std::size_t>& ids) const {
  const Model& model = session_.model();
  std::string text;
  if (!model.checkpoint.present()) {
    for (const std::size_t id : ids) text += (text.empty() ? "" : " ") + model.vocab.token(id);
    return text;
  }
  std::vector<std::size_t> known;
  for (const std::size_t id : ids)
    if (id < model.tokenizer->size()) known.push_back(id);
  return model.tokenizer->decode(known, true);
}

}  // namespace attn
