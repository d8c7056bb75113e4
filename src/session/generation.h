// Generation with the KV cache (attn generate, docs/generation.md): the prompt's run fills the
// cache (prefill), then token after token is chosen (greedy or sampled) and fed alone (step)
// until a stop rule ends it: the --stop token, one of a checkpoint's eos_token_ids, -n new
// tokens, or the end of the model's positions (a learned table's rows, a checkpoint's
// max_positions). What happens is reported to an Observer, which prints or dumps it; the
// generation itself never prints.
#ifndef ATTN_SESSION_GENERATION_H_
#define ATTN_SESSION_GENERATION_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/generate.h"
#include "attn/trace.h"
#include "attn/vocabulary.h"
#include "session/session.h"

namespace attn {

class NumpyRandom;

// How the next token is chosen (the sampling options: --temperature, --top-k, --top-p,
// --seed).
struct SamplingChoice {
  double temperature = 0;  // 0: greedy, the most probable token
  std::size_t top_k = 0;   // 0: every token
  double top_p = 1;        // 1: every token
  std::uint32_t seed = 0;  // np.random.RandomState(seed)'s stream
};

// When generation stops, and how each token is computed.
struct StopRules {
  std::size_t max_new_tokens = 20;      // -n
  std::string stop = Vocabulary::kEnd;  // --stop TOKEN: the word vocabulary's end token by default
  bool no_cache = false;                // --no-cache: a full pass over the prefix for every token
};

// The values a generation cannot use, one InputError each (--temperature, --top-p,
// --max-new-tokens), before anything runs.
void check_generation_choices(const SamplingChoice& sampling, const StopRules& rules);

class Generation {
 public:
  // What a generation reports as it goes; any may be empty.
  struct Observer {
    // Token `number` (1 the first) was chosen after tokens() (not yet holding it); `draws`:
    // the random numbers drawn before this one.
    std::function<void(const SamplingResult& choice, std::size_t number, std::size_t draws)> chose;
    // Generation ends before -n and the stop tokens, for want of positions: why.
    std::function<void(const std::string& note)> ran_out;
    // A cached step's trace for token `number`'s successor, before it runs (what it keeps,
    // where its records go; it keeps no entries unless told).
    std::function<void(Trace& step, std::size_t number)> starting_step;
    // The step ran: the cache holds tokens(), the new token last.
    std::function<void(const Trace& step, std::size_t number)> stepped;
  };

  // Checks everything the run needs before anything runs: a decoder, a text, an output head
  // (the cache refuses a model without one), --ablate (applied: the prompt's run and every
  // step zero the heads; the mean is refused), a token the model can write, the --stop
  // token, and the memory of the run the prompt grows to (estimated as `plan` says the
  // command runs it, with the KV cache at its longest: RunPlan::generated_len).
  Generation(Session& session, const SamplingChoice& sampling, const StopRules& rules, RunPlan plan = {});
  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;
  ~Generation();

  const SamplingChoice& sampling() const { return sampling_; }
  const StopRules& rules() const { return rules_; }
  // The decoder's sequence so far: the prompt (or <BOS> for an encoder-decoder), then the
  // tokens generated.
  const std::vector<std::string>& tokens() const { return tokens_; }
  // How many tokens may follow the prompt: -n, at most what a learned position table holds.
  std::size_t room() const { return room_; }
  // The run as it was estimated (its KV cache at its longest): the lesson's page is
  // estimated beside it.
  const RunPlan& plan() const { return plan_; }
  std::optional<std::size_t> stop_id() const { return stop_id_; }
  // A checkpoint's eos_token_ids: generation stops at any of them.
  const std::vector<std::size_t>& eos_ids() const { return eos_ids_; }
  const KvCacheDecoder& decoder() const { return *decoder_; }
  // The tokens never chosen: a word model's <PAD>, <UNK> and <BOS>, a checkpoint's
  // bad_words_ids.
  const std::vector<std::size_t>& never_ids() const { return never_; }

  // Step 0: the prompt (and for an encoder-decoder the source), recorded into `prompt`; its
  // keys and values fill the cache.
  void prefill(Trace& prompt);
  // The next token, chosen from the last logits; then, unless a stop rule ends generation
  // there, fed through the cache (with --no-cache, the whole prefix run again). False once
  // generation is over.
  bool step(const Observer& observer);
  // Token after token until a stop rule ends it.
  void generate(const Observer& observer);

  const std::vector<std::string>& generated() const { return generated_; }
  const std::vector<std::size_t>& generated_ids() const { return generated_ids_; }
  // Multiply-adds the cache saved over running the whole prefix for every token.
  std::uint64_t saved() const { return saved_; }
  // The generated text as the tokenizer decodes it: a checkpoint's ids (skipping special
  // tokens and the rows no token has; its text starts with its space, " Cere arrows"), or a
  // word model's words joined by spaces. Raw: what a script reads.
  std::string decoded_text() const;

 private:
  std::optional<std::string> ran_out_of_positions() const;
  void rerun_prefix();
  void feed(std::size_t id, const Observer& observer);

  Session& session_;
  SamplingChoice sampling_;
  StopRules rules_;
  std::vector<std::string> tokens_;
  std::size_t room_ = 0;
  RunPlan plan_;
  std::unique_ptr<KvCacheDecoder> decoder_;
  std::optional<std::size_t> stop_id_;
  std::vector<std::size_t> eos_ids_;
  std::vector<std::string> generated_;
  std::vector<std::size_t> generated_ids_;
  std::uint64_t saved_ = 0;
  std::unique_ptr<NumpyRandom> rng_;  // np.random.RandomState(seed): one draw per sampled token
  std::vector<std::size_t> never_;    // the tokens no model writes (<PAD>, <UNK>, <BOS>)
  std::size_t chosen_ = 0;            // tokens chosen so far
  std::size_t draws_ = 0;             // random numbers drawn so far
  bool over_ = false;
};

}  // namespace attn

#endif  // ATTN_SESSION_GENERATION_H_
