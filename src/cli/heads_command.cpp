#include "heads_command.h"

#include <algorithm>
#include <array>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/head_scores.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/run_memory.h"
#include "core/numpy_random.h"
#include "core/top_k.h"
#include "forward/ablation.h"
#include "reading_options.h"
#include "validators.h"

namespace attn::cli {

namespace {

// One head's scores and where it sits.
struct ScoredHead {
  std::string block;  // "decoder.self_attention"
  int layer = 0;
  std::size_t head = 0;
  HeadScores scores;
};

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
std::vector<TraceEntry> attention_records(const Model& model, const RunInput& input, Trace& trace,
                                          Tensor* probabilities) {
  std::vector<TraceEntry> kept;
  trace.keep_entries(false);
  trace.set_sink([&kept](const TraceRecord& r) {
    if (r.id.kind != StepKind::AttentionWeights && r.id.kind != StepKind::TokenIds) return;
    Tensor t = Tensor::uninitialized(r.shape, r.axes);
    std::copy(r.data, r.data + t.size(), t.data.begin());
    kept.push_back(TraceEntry{r.id, r.name, std::move(t), {}});
  });
  *probabilities = run_model(model, input, trace);
  return kept;
}

// Every self-attention head's scores, from an unbatched run's records. Cross-attention's
// queries and keys are different sequences: no previous token, no repeats.
std::vector<ScoredHead> score_heads(const std::vector<TraceEntry>& records) {
  const auto token_ids = [&records](Sequence sequence) -> const Tensor& {
    for (const TraceEntry& e : records)
      if (e.id.kind == StepKind::TokenIds && e.id.sequence == sequence) return e.tensor;
    throw InternalError("attn heads: no token ids recorded");
  };
  std::vector<ScoredHead> heads;
  for (const TraceEntry& e : records) {
    if (e.id.kind != StepKind::AttentionWeights || e.id.block == Block::CrossAttention) continue;
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

std::string score_text(const HeadScore& s) { return s ? fmt::format("{:.2f}", *s) : "-"; }

// The role and the score that names it: "induction 0.98", or "mixed (self 0.31)".
// `bidirectional`: a model without a causal mask anywhere (BERT), whose heads may look ahead:
// next_token and last_token ([SEP]) are among its roles.
std::string role_cell(const HeadScores& scores, bool bidirectional) {
  const std::string role = strongest_role(scores, bidirectional);
  if (role != "mixed") return role + " " + score_text(score_named(scores, role));
  std::string best;
  double best_value = -1;
  for (const std::string& name : head_score_names(bidirectional))
    if (const HeadScore s = score_named(scores, name); s && *s > best_value) {
      best = name;
      best_value = *s;
    }
  return best.empty() ? "mixed" : fmt::format("mixed ({} {:.2f})", best, best_value);
}

std::string without_trailing_spaces(std::string line) {
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

// One table per block: layers as rows, heads as columns.
void print_tables(std::ostream& out, const std::vector<ScoredHead>& heads, bool bidirectional) {
  std::vector<std::string> blocks;
  for (const ScoredHead& h : heads)
    if (std::find(blocks.begin(), blocks.end(), h.block) == blocks.end()) blocks.push_back(h.block);
  for (const std::string& block : blocks) {
    std::vector<const ScoredHead*> in_block;
    std::size_t width = 6, H = 0;
    int layers = 0;
    for (const ScoredHead& h : heads)
      if (h.block == block) {
        in_block.push_back(&h);
        width = std::max(width, role_cell(h.scores, bidirectional).size());
        H = std::max(H, h.head + 1);
        layers = std::max(layers, h.layer + 1);
      }
    out << "\n" << block << ": each head's strongest role (its largest score, if >= 0.5)\n";
    std::string header = fmt::format("{:<8}", "");
    for (std::size_t h = 0; h < H; ++h) header += fmt::format("  {:<{}}", fmt::format("head {}", h), width);
    out << without_trailing_spaces(header) << "\n";
    for (int l = 0; l < layers; ++l) {
      std::string row = fmt::format("{:<8}", fmt::format("layer {}", l));
      for (const ScoredHead* h : in_block)
        if (h->layer == l) row += fmt::format("  {:<{}}", role_cell(h->scores, bidirectional), width);
      out << without_trailing_spaces(row) << "\n";
    }
  }
}

void print_json(std::ostream& out, const std::vector<std::string>& sequence, const std::vector<std::string>* target,
                const std::vector<ScoredHead>& heads, const nlohmann::ordered_json* ablation, bool bidirectional) {
  nlohmann::ordered_json doc;
  doc["sequence"] = sequence;
  if (target) doc["target"] = *target;
  doc["heads"] = nlohmann::ordered_json::array();
  for (const ScoredHead& h : heads) {
    nlohmann::ordered_json j = {{"block", h.block}, {"layer", h.layer}, {"head", h.head}};
    for (const std::string& name : head_score_names(bidirectional)) {
      const HeadScore s = score_named(h.scores, name);
      j[name] = s ? nlohmann::ordered_json(*s) : nlohmann::ordered_json(nullptr);
    }
    j["role"] = strongest_role(h.scores, bidirectional);
    doc["heads"].push_back(j);
  }
  if (ablation) doc["ablation"] = *ablation;
  out << doc.dump() << "\n";
}

// One position's next token without and with the ablation.
struct PositionChange {
  std::size_t position = 0;
  std::string after;             // the token at the position
  std::size_t unablated_id = 0;  // the unablated run's most probable next token
  double unablated_p = 0;
  double ablated_p = 0;        // that token's probability with the ablation
  std::size_t ablated_id = 0;  // the ablated run's most probable next token
  double ablated_pick_p = 0;
};

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

void print_changes(std::ostream& out, const Model& model, const std::vector<PositionChange>& changes,
                   const std::string& label) {
  out << "\nnext tokens without and with the ablation (" << label << "):\n";
  std::vector<std::array<std::string, 4>> rows = {{"", "unablated", "ablated p", "ablated pick"}};
  for (const PositionChange& c : changes)
    rows.push_back({fmt::format("{} after {}", c.position, c.after),
                    fmt::format("{} {:.4f}", model.vocab.token(c.unablated_id), c.unablated_p),
                    fmt::format("{:.4f}", c.ablated_p),
                    fmt::format("{} {:.4f}", model.vocab.token(c.ablated_id), c.ablated_pick_p)});
  std::array<std::size_t, 4> width{};
  for (const auto& r : rows)
    for (std::size_t k = 0; k < 4; ++k) width[k] = std::max(width[k], r[k].size());
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t k = 0; k < 4; ++k) line += fmt::format("{:<{}}  ", r[k], width[k]);
    out << without_trailing_spaces(line) << "\n";
  }
}

nlohmann::ordered_json changes_json(const Model& model, const Ablation& ablation,
                                    const std::vector<PositionChange>& changes) {
  nlohmann::ordered_json j;
  j["heads"] = nlohmann::ordered_json::array();
  for (const HeadAblation& h : ablation.heads)
    j["heads"].push_back(
        {{"stack", h.stack == Stack::Encoder ? "encoder" : "decoder"}, {"layer", h.layer}, {"head", h.head}});
  j["mean"] = ablation.mean;
  j["positions"] = nlohmann::ordered_json::array();
  for (const PositionChange& c : changes)
    j["positions"].push_back({{"position", c.position},
                              {"after", c.after},
                              {"unablated", {{"token", model.vocab.token(c.unablated_id)}, {"p", c.unablated_p}}},
                              {"ablated_p", c.ablated_p},
                              {"ablated", {{"token", model.vocab.token(c.ablated_id)}, {"p", c.ablated_pick_p}}}});
  return j;
}
}  // namespace

void setup_heads(CLI::App& app, HeadsOptions& options) {
  CLI::App* heads = app.add_subcommand(
      "heads",
      "Measure what every attention head does on one sequence: previous-token, first-token, induction, "
      "duplicate-token and self scores (docs/heads.md)");
  ExplainOptions& run = options.run;
  heads->add_option("text", run.text, "The sequence to measure on; default: a random segment of the vocabulary, twice")
      ->check(values_from(ValueList::FreeText));
  heads->add_option("-c,--config", run.model_file, "Model file (JSON, see docs/model-file.md); default: built-in model")
      ->check(non_empty("a file name"));
  heads->add_option("-e,--example", run.example, "A bundled example (list them with 'attn examples')")
      ->excludes("--config")
      ->check(non_empty("an example name ('attn examples' lists them)"))
      ->check(values_from(ValueList::Examples));
  add_checkpoint_option(*heads, run);
  heads->add_flag("--json", options.json, "Every score of every head as JSON, on stdout");
  heads
      ->add_option("--max-memory", run.max_memory_gib,
                   "Refuse runs estimated to need more than this many GiB (default: half the machine's memory)")
      ->check(memory_limit_gib());
  heads->add_option("--seed", options.seed, "Without TEXT: the random sequence's np.random.seed")
      ->transform(seed_number())
      ->capture_default_str();
  add_reading_options(*heads, run, /*with_lens=*/false);
  heads->callback([&options]() {
    const int code = run_heads(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

namespace {

// The run as the scores read it: its attention weights kept, beside the unablated run's
// probabilities with --ablate (`ablation`); a greedy target estimated at the length it can
// grow to.
RunPlan heads_plan(const ExplainOptions& run, const RunInput& input, const Ablation& ablation) {
  RunPlan plan;
  plan.kept = RunPlan::Kept::AttentionWeights;
  plan.model_file_bytes = model_file_bytes(run);
  if (input.target_tokens.from_bos) plan.target_len = generated_length(input) + 1;
  if (!run.ablate.empty()) {
    plan.ablation = &ablation;
    plan.unablated_run = true;
  }
  return plan;
}

}  // namespace

int run_heads(const HeadsOptions& options) {
  LoadOptions load;
  load.trace_kept = false;  // the scores read the attention weights alone (attention_records)
  load.ablation = !options.run.ablate.empty();
  load.weights_as_stored = true;  // the heads are scored from the forward pass alone
  ExplainOptions run = options.run;
  run.text_optional = true;
  LoadedModel loaded = load_run_model(run, load);
  const Model& model = loaded.model;
  RunInput& input = loaded.input;
  if (run.text.empty() && model.checkpoint.present()) {
    input = RunInput{};
    input.batched = false;
    input.source_tokens.tokens.push_back(repeated_pieces(model, options.seed));
    input.source_tokens.json_path = "the random repeated sequence";
  } else if (run.text.empty()) {
    if (!input.has_tokens())
      throw InputError(model_source_name(run), "input", "attn heads reads text: this model's input is numbers");
    replace_source_text(model, input, repeated_sequence(model.vocab, options.seed), "the random repeated sequence");
  }
  if (input.batched)
    throw InputError(model_source_name(run), "input",
                     "attn heads measures one sequence; give TEXT on the command line");
  const Ablation ablation = run.ablate.empty() ? Ablation{} : parse_ablation(run.ablate, run.ablate_mean, model);
  check_run_memory(model, input, load, heads_plan(run, input, ablation));
  if (input.target_tokens.from_bos) extend_target_greedily(model, input, generated_length(input));
  // --ablate: the heads' scores and the probabilities of the ablated run, beside the
  // unablated run's probabilities (the target above is the unablated model's own).
  Tensor unablated;
  if (!run.ablate.empty()) {
    unablated = unablated_probabilities(model, input);
    input.ablation = parse_ablation(run.ablate, run.ablate_mean, model);
  }
  Trace trace(true);
  Tensor probabilities;
  const std::vector<ScoredHead> heads = score_heads(attention_records(model, input, trace, &probabilities));
  const auto* tokens = trace.tokens(Sequence::Source);
  const std::vector<std::string> sequence = tokens ? tokens->front() : std::vector<std::string>{};
  const auto* target = model.has_target() ? trace.tokens(Sequence::Target) : nullptr;
  const std::vector<PositionChange> changes =
      input.ablation.empty() ? std::vector<PositionChange>{}
                             : position_changes(model, unablated, probabilities, target ? target->front() : sequence);
  // no causal mask anywhere (BERT's encoder): its heads may look ahead
  const bool bidirectional = !model.config.causal && !model.has_decoder();
  if (options.json) {
    const nlohmann::ordered_json ablation = changes_json(model, input.ablation, changes);
    print_json(std::cout, sequence, target ? &target->front() : nullptr, heads,
               input.ablation.empty() ? nullptr : &ablation, bidirectional);
    return 0;
  }
  std::string joined;
  for (const std::string& t : sequence) {
    // A checkpoint's pieces readable, beside their ids: "␣cat"→3797.
    const auto id = model.checkpoint.present() ? model.vocab.exact(t) : std::nullopt;
    joined += (joined.empty() ? "" : " ") + (id ? fmt::format("\"{}\"→{}", readable_token(model, t), *id) : t);
  }
  std::cout << fmt::format("attn heads: {}, {} tokens: {}\n", model_source_name(run), sequence.size(), joined);
  if (target) {
    std::string text;
    for (const std::string& t : target->front()) text += (text.empty() ? "" : " ") + t;
    std::cout << fmt::format("the decoder read: {}\n", text);
  }
  if (!input.ablation.empty())
    std::cout << fmt::format("ablated: {} (the scores below are the ablated run's)\n", ablation_label(input.ablation));
  print_tables(std::cout, heads, bidirectional);
  if (!input.ablation.empty() && model.output.present)
    print_changes(std::cout, model, changes, ablation_label(input.ablation));
  return 0;
}

}  // namespace attn::cli
