// Beam search (attn generate --beams N, docs/generation.md), as Hugging Face's generate runs
// it (transformers' generation/beam_search.py, BeamSearchScorer and BeamHypotheses): N
// sequences are kept at once. Each step every beam is followed by every token, scored by its
// total log-probability (the beam's score + log_softmax of its logits, the never-written
// tokens at -inf); the best max(2, 1 + eos tokens) x N candidates are read best first: an
// end token among the first N finishes a hypothesis, scored by its log-probability divided
// by its length^length_penalty; the others become the next beams until N are kept. The
// search stops when no open beam can beat the N hypotheses kept (early_stopping), or at -n
// new tokens, where the open beams join the hypotheses; the best hypothesis is the answer.
// The search never prints; a BeamStep says what each step did.
#ifndef ATTN_SESSION_BEAM_SEARCH_H_
#define ATTN_SESSION_BEAM_SEARCH_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attn/generate.h"
#include "session/generation.h"

namespace attn {

// When the search may stop before -n (transformers' early_stopping): Heuristic (false) when
// the best candidate's score, divided by the current length^length_penalty, cannot beat the
// worst hypothesis kept; AtOnce (true) as soon as N hypotheses are kept; Never ("never")
// only when no candidate could beat them even at the longest length.
enum class EarlyStopping : unsigned char { Heuristic, AtOnce, Never };

struct BeamRules {
  std::size_t beams = 1;      // --beams N: 1 is greedy search
  double length_penalty = 1;  // --length-penalty: hypothesis score = sum of log p / length^this
  EarlyStopping early_stopping = EarlyStopping::Heuristic;  // --early-stopping
};

// The values a beam search cannot use, one InputError each (--beams, --length-penalty, and
// the sampling options and --no-cache beside --beams), before anything runs.
void check_beam_rules(const BeamRules& rules, const SamplingChoice& sampling, const StopRules& stop);

// An open beam: the tokens after the prompt and the sum of their log-probabilities.
struct Beam {
  std::vector<std::size_t> ids;
  double score = 0;
};

// One of a step's best candidates: beam `beam` followed by `token`.
struct BeamCandidate {
  enum class Fate : unsigned char {
    Kept,      // became the next beam `kept_as`
    Finished,  // an end token among the first N: a hypothesis
    Skipped,   // an end token ranked N or lower: not a hypothesis (transformers' rule)
    Unused,    // after N beams were kept
  };
  std::size_t beam = 0;
  std::size_t token = 0;
  double log_p = 0;  // log_softmax of the beam's logits at `token`
  double score = 0;  // the beam's score + log_p
  Fate fate = Fate::Unused;
  std::size_t kept_as = 0;
};

// A finished sequence: ended by an end token, or open when the search ran out of tokens.
struct BeamHypothesis {
  std::vector<std::size_t> ids;  // the tokens after the prompt, without the end token
  double sum = 0;                // the sum of log-probabilities (the end token's included)
  std::size_t length = 0;        // the length the penalty divides by (the end token counted)
  double score = 0;              // sum / length^length_penalty
  bool ended = false;            // ended by an end token
};

// What one step did: token `number` (1 the first) chosen for every beam.
struct BeamStep {
  std::size_t number = 0;
  std::vector<Beam> from;                 // the beams the step followed
  std::vector<BeamCandidate> candidates;  // the best, best first
  std::vector<BeamHypothesis> finished;   // the hypotheses this step's end tokens made
  bool done = false;                      // the search stops here (early stopping, -n, positions)
};

class BeamSearch {
 public:
  // Checks what a generation checks (Generation), with the memory of N caches.
  BeamSearch(Session& session, const BeamRules& rules, const StopRules& stop, RunPlan plan = {});
  BeamSearch(const BeamSearch&) = delete;
  BeamSearch& operator=(const BeamSearch&) = delete;
  ~BeamSearch();

  const BeamRules& rules() const { return rules_; }
  // The prompt's generation: its tokens, stop ids, and the prompt's run (prefill) into its cache.
  Generation& generation() { return *generation_; }
  const Generation& generation() const { return *generation_; }
  // After the prompt's run: N beams from its cache, beam 0 at score 0 and the others at -1e9
  // (so that the first step reads beam 0's candidates: every beam is the same prompt).
  void start();
  // The next step, reported to `observer`; false once the search is over.
  bool step(const std::function<void(const BeamStep&)>& observer);
  void run(const std::function<void(const BeamStep&)>& observer);

  const std::vector<Beam>& beams() const { return beams_; }
  // The hypotheses kept (at most N); once the search is over, best first.
  const std::vector<BeamHypothesis>& hypotheses() const { return hypotheses_; }
  const BeamHypothesis& best() const;
  // The best hypothesis' text as the tokenizer decodes it (Generation::decoded_text's rules).
  std::string decoded_text() const;
  // Any sequence of ids as the tokenizer decodes it (special tokens skipped).
  std::string text_of(const std::vector<std::size_t>& ids) const;
  // How many new tokens at most: -n, and one more than the positions the prompt leaves.
  std::size_t limit() const { return limit_; }

 private:
  std::vector<BeamCandidate> best_candidates() const;
  // A hypothesis ending at this step: its score, sum / steps^length_penalty.
  BeamHypothesis hypothesis(std::vector<std::size_t> ids, double sum, bool ended) const;
  void add_hypothesis(BeamHypothesis hypothesis);
  bool is_done(double best_score) const;
  void feed(const std::vector<std::size_t>& from);
  void finish();

  Session& session_;
  BeamRules rules_;
  std::unique_ptr<Generation> generation_;
  std::vector<std::size_t> ends_;  // the end tokens: eos_token_ids, --stop
  std::size_t limit_ = 0;
  std::vector<std::unique_ptr<KvCacheDecoder>> decoders_;  // one per beam
  std::vector<Beam> beams_;
  std::vector<BeamHypothesis> hypotheses_;
  double worst_ = 1e9;  // the worst kept hypothesis' score (transformers' worst_score)
  std::size_t steps_ = 0;
  bool done_ = false, over_ = false;
};

}  // namespace attn

#endif  // ATTN_SESSION_BEAM_SEARCH_H_
