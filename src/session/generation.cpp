#include "session/generation.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/model_file.h"
#include "core/numpy_random.h"
#include "model/token_input.h"

namespace attn {

namespace {

const char* const kNoDecoder =
    "this model has no decoder to generate with: give a decoder-only model (model.architecture \"decoder-only\") or "
    "an encoder-decoder";

// The decoder's starting sequence: a decoder-only model's input text, or <BOS> for an
// encoder-decoder (whose source is the text).
std::vector<std::string> start_tokens(const Model& model, RunInput& input) {
  if (!model.has_decoder()) throw InputError(model.source, "decoder", kNoDecoder);
  if (!input.has_tokens())
    throw InputError(model.source, "input", "generate reads text: this model's input is numbers (input.X)");
  if (input.batched)
    throw InputError(model.source, "input",
                     "generate continues a single text; this file's input is a batch: give one TEXT on the command "
                     "line");
  if (model.decoder_only()) return token_lists(input.source_tokens)[0];
  if (!model.has_target())
    throw InputError(model.source, model.decoder.empty() ? "decoder" : "model.architecture", kNoDecoder);
  if (!start_from_bos(model, input))
    throw InputError(model.source, "vocab", "the decoder starts from \"<BOS>\", which this vocabulary lacks");
  return {model.vocab.token(*decoder_start_id(model))};  // <BOS>, or decoder_start_token_id
}

}  // namespace

void check_generation_choices(const SamplingChoice& sampling, const StopRules& rules) {
  if (!(sampling.temperature >= 0))
    throw InputError(
        "--temperature", "",
        fmt::format("expected a number >= 0 (0: greedy, the most probable token), found {}", sampling.temperature));
  if (!(sampling.top_p > 0 && sampling.top_p <= 1))
    throw InputError("--top-p", "",
                     fmt::format("expected a number in (0, 1] (1: every token), found {}", sampling.top_p));
  if (rules.max_new_tokens == 0) throw InputError("--max-new-tokens", "", "expected at least 1, found 0");
}

Generation::Generation(Session& session, const SamplingChoice& sampling, const StopRules& rules, RunPlan plan)
    : session_(session), sampling_(sampling), rules_(rules) {
  const Model& model = session.model();
  tokens_ = start_tokens(model, session.input());
  session.apply_reading();  // --ablate: the prompt's run and every step zero the heads
  // no output head, or an ablation by the mean: refused here
  decoder_ = std::make_unique<KvCacheDecoder>(model, session.input().ablation);
  if (never_generated_ids(model).size() >= model.vocab.size())
    throw InputError(model.source, "vocab",
                     fmt::format("expected a token the model can write, found only {} special tokens that no model "
                                 "writes (<PAD>, <UNK>, <BOS>): there is nothing to generate",
                                 model.vocab.size()));
  stop_id_ = model.checkpoint.present() ? model.vocab.exact(rules.stop) : model.vocab.find(rules.stop);
  if (model.checkpoint.present()) eos_ids_ = model.checkpoint.eos_token_ids;
  if (!stop_id_ && rules.stop != Vocabulary::kEnd)
    throw InputError("--stop", "",
                     fmt::format("\"{}\" is not in the vocabulary of {}, so it could never be generated",
                                 printable(rules.stop), model.source));
  // The run the prompt grows to: the prompt (or <BOS>) and -n new tokens, at most what a
  // learned position table holds.
  std::size_t longest = tokens_.size() + rules.max_new_tokens;
  if (longest < rules.max_new_tokens) longest = std::numeric_limits<std::size_t>::max();
  if (reads_position_table(model.config.positional_encoding))
    longest = std::min<std::size_t>(longest, model.config.max_len);
  // the prompt's run and the last new token's step, with the KV cache at its longest
  plan.generated_len = longest;
  session.check_memory(plan);
  plan_ = plan;
  room_ = longest > tokens_.size() ? longest - tokens_.size() : 0;
  rng_ = std::make_unique<NumpyRandom>(sampling.seed);
  never_ = never_generated_ids(model);  // and a checkpoint's bad_words_ids
}

Generation::~Generation() = default;

void Generation::prefill(Trace& prompt) { decoder_->prefill(session_.input(), prompt); }

// Why no further token fits, if none does: the checkpoint's positions, or a learned table's.
std::optional<std::string> Generation::ran_out_of_positions() const {
  const Model& model = session_.model();
  if (model.checkpoint.present() && model.checkpoint.max_positions &&
      decoder_->length() >= model.checkpoint.max_positions)
    return fmt::format("the model has {} positions: no room for more", model.checkpoint.max_positions);
  if (reads_position_table(model.config.positional_encoding) && decoder_->length() >= model.config.max_len)
    return fmt::format("the position table has {} rows: no room for more", model.config.max_len);
  return std::nullopt;
}

// --no-cache: the whole prefix again, as attn explain would run it, into a new cache. The
// session's input is not touched: the prefix is a run input of its own.
void Generation::rerun_prefix() {
  const Model& model = session_.model();
  auto full = std::make_unique<KvCacheDecoder>(model, session_.input().ablation);
  Trace again(true);
  again.keep_entries(false);
  RunInput prefix = session_.input();
  TokenInput& sequence = model.decoder_only() ? prefix.source_tokens : prefix.target_tokens;
  sequence.texts.clear();
  sequence.tokens = {tokens_};
  full->prefill(prefix, again);
  decoder_ = std::move(full);
}

bool Generation::step(const Observer& observer) {
  if (over_) return false;
  const Model& model = session_.model();
  const std::size_t n = ++chosen_;
  const std::vector<double>& logits = decoder_->logits();
  const SamplingOptions options{sampling_.temperature, sampling_.top_k, sampling_.top_p};
  const SamplingResult choice = choose_next_token(logits.data(), logits.size(), options, never_, rng_.get());
  if (observer.chose) observer.chose(choice, n, draws_);
  if (choice.draw) ++draws_;
  const std::string token = model.vocab.token(choice.id);
  over_ =
      (stop_id_ && choice.id == *stop_id_) || std::find(eos_ids_.begin(), eos_ids_.end(), choice.id) != eos_ids_.end();
  if (over_) return false;
  generated_.push_back(token);
  generated_ids_.push_back(choice.id);
  tokens_.push_back(token);
  over_ = n == rules_.max_new_tokens;
  if (over_) return false;
  if (const auto note = ran_out_of_positions()) {
    if (observer.ran_out) observer.ran_out(*note);
    over_ = true;
    return false;
  }
  feed(choice.id, observer);
  return true;
}

// Token `id`, the last of tokens(), through the cache in a step of its own (or, with
// --no-cache, the whole prefix again).
void Generation::feed(std::size_t id, const Observer& observer) {
  if (rules_.no_cache) {
    rerun_prefix();
    return;
  }
  Trace trace(true);
  trace.keep_entries(false);
  if (observer.starting_step) observer.starting_step(trace, chosen_);
  decoder_->step(id, trace);
  saved_ += decoder_->last_cost().without_cache - decoder_->last_cost().with_cache;
  if (observer.stepped) observer.stepped(trace, chosen_);
}

void Generation::generate(const Observer& observer) {
  while (step(observer)) {
  }
}

std::string Generation::decoded_text() const {
  const Model& model = session_.model();
  std::string text;
  if (!model.checkpoint.present()) {
    for (const auto& t : generated_) text += (text.empty() ? "" : " ") + t;
    return text;
  }
  std::vector<std::size_t> ids;
  for (const std::size_t id : generated_ids_)
    if (id < model.tokenizer->size()) ids.push_back(id);
  return model.tokenizer->decode(ids, true);
}

}  // namespace attn
