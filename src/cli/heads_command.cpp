#include "heads_command.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/head_scores.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "core/numpy_random.h"
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

std::vector<std::size_t> ids_of(const Tensor& token_ids) {
  std::vector<std::size_t> ids;
  for (double v : token_ids.data) ids.push_back(static_cast<std::size_t>(v));
  return ids;
}

// What a run keeps for the scores: the attention weights of every block and the token ids,
// copied as the forward pass records them (the trace itself keeps nothing, so a large model
// holds no more than these).
std::vector<TraceEntry> attention_records(const Model& model, const RunInput& input, Trace& trace) {
  std::vector<TraceEntry> kept;
  trace.keep_entries(false);
  trace.set_sink([&kept](const TraceRecord& r) {
    if (r.id.kind != StepKind::AttentionWeights && r.id.kind != StepKind::TokenIds) return;
    Tensor t = Tensor::uninitialized(r.shape, r.axes);
    std::copy(r.data, r.data + t.size(), t.data.begin());
    kept.push_back(TraceEntry{r.id, r.name, std::move(t), {}});
  });
  run_model(model, input, trace);
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
std::string role_cell(const HeadScores& scores) {
  const std::string role = strongest_role(scores);
  if (role != "mixed") return role + " " + score_text(score_named(scores, role));
  std::string best;
  double best_value = -1;
  for (const std::string& name : head_score_names())
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
void print_tables(std::ostream& out, const std::vector<ScoredHead>& heads) {
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
        width = std::max(width, role_cell(h.scores).size());
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
        if (h->layer == l) row += fmt::format("  {:<{}}", role_cell(h->scores), width);
      out << without_trailing_spaces(row) << "\n";
    }
  }
}

void print_json(std::ostream& out, const std::vector<std::string>& sequence, const std::vector<std::string>* target,
                const std::vector<ScoredHead>& heads) {
  nlohmann::ordered_json doc;
  doc["sequence"] = sequence;
  if (target) doc["target"] = *target;
  doc["heads"] = nlohmann::ordered_json::array();
  for (const ScoredHead& h : heads) {
    nlohmann::ordered_json j = {{"block", h.block}, {"layer", h.layer}, {"head", h.head}};
    for (const std::string& name : head_score_names()) {
      const HeadScore s = score_named(h.scores, name);
      j[name] = s ? nlohmann::ordered_json(*s) : nlohmann::ordered_json(nullptr);
    }
    j["role"] = strongest_role(h.scores);
    doc["heads"].push_back(j);
  }
  out << doc.dump() << "\n";
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
  heads->add_flag("--json", options.json, "Every score of every head as JSON, on stdout");
  heads
      ->add_option("--max-memory", run.max_memory_gib,
                   "Refuse runs estimated to need more than this many GiB (default: half the machine's memory)")
      ->check(memory_limit_gib());
  heads->add_option("--seed", options.seed, "Without TEXT: the random sequence's np.random.seed")
      ->capture_default_str();
  heads->callback([&options]() {
    const int code = run_heads(options);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

int run_heads(const HeadsOptions& options) {
  LoadOptions load;
  ExplainOptions run = options.run;
  LoadedModel loaded = load_run_model(run, load);
  const Model& model = loaded.model;
  RunInput& input = loaded.input;
  if (run.text.empty()) {
    if (!input.has_tokens())
      throw InputError(model_source_name(run), "input", "attn heads reads text: this model's input is numbers");
    replace_source_text(model, input, repeated_sequence(model.vocab, options.seed), "the random repeated sequence");
  }
  if (input.batched)
    throw InputError(model_source_name(run), "input",
                     "attn heads measures one sequence; give TEXT on the command line");
  const bool greedy = input.target_tokens.from_bos;  // estimated with the target it can grow to
  check_run_memory(model, input, load, greedy ? generated_length(input) + 1 : 0);
  if (greedy) extend_target_greedily(model, input, generated_length(input));
  Trace trace(true);
  const std::vector<ScoredHead> heads = score_heads(attention_records(model, input, trace));
  const auto* tokens = trace.tokens(Sequence::Source);
  const std::vector<std::string> sequence = tokens ? tokens->front() : std::vector<std::string>{};
  const auto* target = model.has_target() ? trace.tokens(Sequence::Target) : nullptr;
  if (options.json) {
    print_json(std::cout, sequence, target ? &target->front() : nullptr, heads);
    return 0;
  }
  std::string joined;
  for (const std::string& t : sequence) joined += (joined.empty() ? "" : " ") + t;
  std::cout << fmt::format("attn heads: {}, {} tokens: {}\n", model_source_name(run), sequence.size(), joined);
  if (target) {
    std::string text;
    for (const std::string& t : target->front()) text += (text.empty() ? "" : " ") + t;
    std::cout << fmt::format("the decoder read: {}\n", text);
  }
  print_tables(std::cout, heads);
  return 0;
}

}  // namespace attn::cli
