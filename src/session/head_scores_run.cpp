#include "session/head_scores_run.h"

#include <algorithm>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/step_roles.h"
#include "core/numpy_random.h"
#include "core/top_k.h"
#include "model/token_input.h"

namespace attn {

namespace {

// Without TEXT: <BOS> (when the vocabulary has it), then L distinct ordinary tokens, then
// the same L again, L = min(10, their number); the tokens are np.random.seed(seed)'s
// np.random.permutation of the ordinary tokens, its first L.
std::string repeated_sequence(const Vocabulary& vocab, std::uint32_t seed) {
  std::vector<std::string> ordinary;
  for (const std::string& t : vocab.tokens())
    if (t != Vocabulary::kPad && t != Vocabulary::kUnknown && t != Vocabulary::kBegin && t != Vocabulary::kEnd)
      ordinary.push_back(t);
  if (ordinary.size() < 2)
    throw InputError("attn heads", "vocab",
                     fmt::format("expected at least 2 ordinary tokens to draw a repeated sequence from, found {}; "
                                 "give TEXT",
                                 ordinary.size()));
  NumpyRandom rng(seed);
  const std::vector<std::size_t> order = rng.permutation(ordinary.size());
  const std::size_t L = std::min<std::size_t>(10, ordinary.size());
  std::string segment;
  for (std::size_t i = 0; i < L; ++i) segment += (i ? " " : "") + ordinary[order[i]];
  const bool bos = vocab.find(Vocabulary::kBegin).has_value();
  return (bos ? std::string(Vocabulary::kBegin) + " " : "") + segment + " " + segment;
}

// A checkpoint's version of it, as TransformerLens's induction test: the tokenizer's begin
// token (GPT-2's <|endoftext|>, which begins and ends), then L distinct ordinary (not
// special) tokens drawn as above, then the same L again; L = 10, or less to fit the
// model's positions.
std::vector<std::string> repeated_pieces(const Model& model, std::uint32_t seed) {
  const Tokenizer& tokenizer = *model.tokenizer;
  std::vector<std::size_t> ordinary;
  for (std::size_t id = 0; id < tokenizer.size(); ++id)
    if (!tokenizer.is_special(id)) ordinary.push_back(id);
  auto begin = tokenizer.special_id(SpecialRole::Begin);
  if (!begin) begin = tokenizer.special_id(SpecialRole::End);
  const std::size_t positions = model.checkpoint.max_positions ? model.checkpoint.max_positions : 21;
  const std::size_t L = std::min<std::size_t>({10, ordinary.size(), (positions - (begin ? 1 : 0)) / 2});
  if (L < 2)
    throw InputError("attn heads", "",
                     "expected room for 2 ordinary tokens twice in this model, found none; give TEXT");
  NumpyRandom rng(seed);
  const std::vector<std::size_t> order = rng.permutation(ordinary.size());
  std::vector<std::string> pieces;
  if (begin) pieces.push_back(tokenizer.piece(*begin));
  for (int twice = 0; twice < 2; ++twice)
    for (std::size_t i = 0; i < L; ++i) pieces.push_back(tokenizer.piece(ordinary[order[i]]));
  return pieces;
}

std::vector<std::size_t> ids_of(const Tensor& token_ids) {
  std::vector<std::size_t> ids;
  for (double v : token_ids.data) ids.push_back(static_cast<std::size_t>(v));
  return ids;
}

// What a run keeps for the scores: the attention weights of every block and the token ids,
// copied as the forward pass records them (the trace itself keeps nothing, so a large model
// holds no more than these).
// `probabilities` gets the run's next-token probabilities (an output head's; else its output).
std::vector<TraceEntry> attention_records(const Session& session, Trace& trace, Tensor* probabilities,
                                          const std::function<void(const TraceRecord&)>& watch) {
  std::vector<TraceEntry> kept;
  trace.keep_entries(false);
  trace.set_sink([&kept, &watch](const TraceRecord& r) {
    if (watch) watch(r);
    if (!is_attention_pattern(r.id.kind) && !is_token_ids(r.id.kind)) return;
    Tensor t = Tensor::uninitialized(r.shape, r.axes);
    std::copy(r.data, r.data + t.size(), t.data.begin());
    kept.push_back(TraceEntry{r.id, r.name, std::move(t), {}});
  });
  *probabilities = session.run(trace);
  return kept;
}

// Every self-attention head's scores, from an unbatched run's records. Cross-attention's
// queries and keys are different sequences: no previous token, no repeats.
std::vector<ScoredHead> score_heads(const std::vector<TraceEntry>& records) {
  const auto token_ids = [&records](Sequence sequence) -> const Tensor& {
    for (const TraceEntry& e : records)
      if (is_token_ids(e.id.kind) && e.id.sequence == sequence) return e.tensor;
    throw InternalError("attn heads: no token ids recorded");
  };
  std::vector<ScoredHead> heads;
  for (const TraceEntry& e : records) {
    if (!is_attention_pattern(e.id.kind) || e.id.block == Block::CrossAttention) continue;
    const std::vector<std::size_t> tokens = ids_of(token_ids(e.id.sequence));
    const std::size_t H = e.tensor.dim(0), S = e.tensor.dim(1);  // (H,S,S)
    // "decoder.0.self_attention.weights" -> "decoder.self_attention"
    const std::string block_path = e.name.substr(0, e.name.rfind('.'));
    const std::size_t first_dot = block_path.find('.'), second_dot = block_path.find('.', first_dot + 1);
    const std::string block = block_path.substr(0, first_dot) + block_path.substr(second_dot);
    for (std::size_t h = 0; h < H; ++h) {
      const Tensor w = take_index(e.tensor, 0, h);  // (S,S)
      heads.push_back({block, e.id.layer, h, score_head(reshaped(w, {S, S}, {"S", "S"}), tokens)});
    }
  }
  return heads;
}

std::vector<PositionChange> position_changes(const Model& model, const Tensor& unablated, const Tensor& ablated,
                                             const std::vector<std::string>& tokens) {
  std::vector<PositionChange> out;
  const std::size_t V = model.vocab.size();
  if (!model.output.present || unablated.size() != ablated.size() || ablated.size() % V) return out;
  const std::vector<std::size_t> never = model.vocab.never_written_ids();
  for (std::size_t i = 0; i < ablated.size() / V && i < tokens.size(); ++i) {
    const auto before = top_tokens(unablated.data.data() + i * V, V, 1, never);
    const auto after = top_tokens(ablated.data.data() + i * V, V, 1, never);
    if (before.empty() || after.empty()) continue;
    out.push_back({i, tokens[i], before[0].id, before[0].probability, ablated.data[i * V + before[0].id], after[0].id,
                   after[0].probability});
  }
  return out;
}

}  // namespace

void use_repeated_sequence(Session& session, std::uint32_t seed) {
  const Model& model = session.model();
  RunInput& input = session.input();
  if (model.checkpoint.present()) {
    input = RunInput{};
    input.batched = false;
    input.source_tokens.tokens.push_back(repeated_pieces(model, seed));
    input.source_tokens.json_path = "the random repeated sequence";
    // an encoder-decoder's decoder reads its own words from decoder_start_token_id, as with TEXT
    if (model.has_target()) start_from_bos(model, input);
    return;
  }
  if (!input.has_tokens())
    throw InputError(session.source_name(), "input", "attn heads reads text: this model's input is numbers");
  replace_source_text(model, input, repeated_sequence(model.vocab, seed), "the random repeated sequence");
}

void check_one_sequence(const Session& session) {
  if (session.input().batched)
    throw InputError(session.source_name(), "input", "attn heads measures one sequence; give TEXT on the command line");
}

HeadsReport measure_heads(const Session& session, const Tensor& unablated,
                          const std::function<void(const TraceRecord&)>& watch) {
  const Model& model = session.model();
  Trace trace(true);
  Tensor probabilities;
  HeadsReport report;
  report.heads = score_heads(attention_records(session, trace, &probabilities, watch));
  if (const auto* tokens = trace.tokens(Sequence::Source)) report.sequence = tokens->front();
  if (const auto* target = model.has_target() ? trace.tokens(Sequence::Target) : nullptr)
    report.target = target->front();
  report.ablation = session.input().ablation;
  report.bidirectional = !model.config.causal && !model.has_decoder();
  if (!report.ablation.empty())
    report.changes =
        position_changes(model, unablated, probabilities, report.target ? *report.target : report.sequence);
  return report;
}

}  // namespace attn
