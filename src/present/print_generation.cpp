#include "present/print_generation.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "present/array_format.h"
#include "present/labeled_table.h"
#include "present/terminal.h"

namespace attn {

namespace {

// "1,256"
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void write(std::ostream& out, const std::string& text, const WalkthroughOptions& options) {
  out << wrapped(text, options.array.line_width) << "\n";
}

// A table indented under its caption.
std::string indented(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    out += "  " + text.substr(start, end - start + 1);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

void write_tensor(std::ostream& out, const std::string& label, const Tensor& t, const WalkthroughOptions& options) {
  const std::string prefix = "  " + label + " = ";
  out << prefix << format_array(t, options.array, display_width(prefix)) << "\n";
}

// (1?,H,1,T) -> (H,T): one row per head
Tensor head_rows(const Tensor& t) {
  Tensor m({t.shape[t.rank() - 3], t.shape.back()}, {"H", "t"});
  std::copy_n(t.data.begin(), m.size(), m.data.begin());
  return m;
}

const TraceEntry* find_kind(const Trace& trace, int layer, Block block, StepKind kind) {
  for (const auto& e : trace.entries())
    if (e.id.layer == layer && e.id.block == block && e.id.kind == kind && e.id.stack == Stack::Decoder) return &e;
  return nullptr;
}

std::string shape_text(const Tensor& t) {
  return fmt::format("(H={}, t={}, d={})", t.shape[0], t.shape[1], t.shape[2]);
}

}  // namespace

void print_cache_after_prompt(std::ostream& out, const KvCacheDecoder& decoder, const Model& model,
                              const WalkthroughOptions& options) {
  out << "\n";
  write(out, "── The KV cache after the prompt ──", options);
  write(out,
        "  Each layer keeps the keys and values its self-attention computed for every position (the k_heads and "
        "v_heads above): a new token's query needs them all, and they never change, since no position sees a later "
        "one.",
        options);
  for (std::size_t j = 0; j < decoder.caches().size(); ++j) {
    const LayerCache& c = decoder.caches()[j];
    std::string line = fmt::format("  decoder.{}: K {}, V {}", j, shape_text(c.k), shape_text(c.v));
    if (model.has_target() && !c.cross_k.data.empty())
      line += fmt::format("; cross-attention K, V {} (the source's, fixed)", shape_text(c.cross_k));
    write(out, line, options);
  }
}

void print_generation_step(std::ostream& out, const Trace& step, const KvCacheDecoder& decoder, const Model& model,
                           const std::vector<std::string>& tokens, std::size_t number,
                           const WalkthroughOptions& options) {
  const std::size_t position = tokens.size() - 1;
  const StepCost cost = decoder.last_cost();
  out << "\n";
  write(out,
        fmt::format("══ Token {}: \"{}\" fed back at position {}; only its row is computed ══", number, tokens.back(),
                    position),
        options);
  write(out,
        fmt::format("  reused from the cache: the keys and values of positions 0-{} in each of {} layer{}{}; this "
                    "row took {} multiply-adds, a full pass over the {} positions {} ({} saved)",
                    position - 1, model.decoder.size(), model.decoder.size() == 1 ? "" : "s",
                    model.has_target() ? ", and the source's cross-attention keys and values" : "",
                    grouped(cost.with_cache), position + 1, grouped(cost.without_cache),
                    grouped(cost.without_cache - cost.with_cache)),
        options);
  std::vector<std::string> keys;
  for (const auto& t : tokens) keys.push_back(token_label("K", t));
  for (std::size_t j = 0; j < model.decoder.size(); ++j) {
    const int l = static_cast<int>(j);
    const LayerCache& cache = decoder.caches()[j];
    write(out, fmt::format("── decoder.{}: the new row ──", j), options);
    for (auto [kind, name] :
         {std::pair{StepKind::Query, "q"}, std::pair{StepKind::Key, "k"}, std::pair{StepKind::Value, "v"}})
      if (const TraceEntry* e = find_kind(step, l, Block::MaskedSelfAttention, kind))
        write_tensor(out, fmt::format("{} (position {}, = row · W_{})", name, position, name), e->tensor, options);
    write(out,
          fmt::format("  KV cache: K {}, V {}   (one row more: this position's k and v, split into heads)",
                      shape_text(cache.k), shape_text(cache.v)),
          options);
    const TraceEntry* scaled = find_kind(step, l, Block::MaskedSelfAttention, StepKind::ScaledScores);
    const TraceEntry* weights = find_kind(step, l, Block::MaskedSelfAttention, StepKind::AttentionWeights);
    if (scaled && weights && keys.size() == scaled->tensor.shape.back()) {
      std::vector<std::string> heads;
      for (std::size_t h = 0; h < model.config.num_heads; ++h) heads.push_back(fmt::format("head {}", h));
      LabeledTableOptions table;
      table.precision = options.array.precision;
      write(out,
            fmt::format("  the new query against every cached key, q · kᵀ / √{} (no mask needed: every cached "
                        "position is at or before this one):",
                        model.config.d_head),
            options);
      out << indented(render_labeled_table(head_rows(scaled->tensor), heads, keys, table));
      write(out, "  weights = softmax of each row:", options);
      out << indented(render_labeled_table(head_rows(weights->tensor), heads, keys, table));
    }
    if (model.has_target())
      write(out,
            fmt::format("  cross-attention: the new query against the source's cached K {} alone",
                        shape_text(cache.cross_k)),
            options);
  }
}

void print_choice(std::ostream& out, const SamplingResult& r, const SamplingOptions& sampling, const Model& model,
                  const std::vector<std::string>& tokens, std::size_t number, std::size_t draws, std::uint32_t seed,
                  const WalkthroughOptions& options) {
  out << "\n";
  write(out, fmt::format("── Choosing token {} (after \"{}\") ──", number, tokens.back()), options);
  // The labelled table: the most probable tokens, with the distribution drawn from.
  const std::size_t V = r.probabilities.size();
  std::vector<std::size_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return r.probabilities[a] > r.probabilities[b]; });
  const std::size_t k = std::min(options.top_k, V);
  const bool sampled = r.draw.has_value();
  Tensor table({k, sampled ? std::size_t{2} : std::size_t{1}}, {"k", "p"});
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < k; ++i) {
    rows.push_back(fmt::format("{}. \"{}\"", i + 1, model.vocab.token(order[i])));
    table.data[i * table.shape[1]] = r.probabilities[order[i]];
    if (sampled) table.data[i * 2 + 1] = r.distribution[order[i]];
  }
  LabeledTableOptions format;
  format.precision = options.array.precision;
  std::string never;
  for (std::size_t id : model.vocab.never_written_ids()) never += (never.empty() ? "" : ", ") + model.vocab.token(id);
  write(out,
        fmt::format("  the next-token distribution p = softmax(logits), its top {}{}:", k,
                    never.empty() ? "" : " (" + never + " never written)"),
        options);
  std::vector<std::string> columns = {"p"};
  if (sampled) columns.push_back("drawn from");
  out << indented(render_labeled_table(table, rows, columns, format));
  if (!sampled) {
    write(out, fmt::format("  greedy (temperature 0): the most probable token, \"{}\"", model.vocab.token(r.id)),
          options);
    return;
  }
  std::string steps =
      fmt::format("  temperature {}: p = softmax(logits / {})", sampling.temperature, sampling.temperature);
  if (sampling.top_k) steps += fmt::format("; top-k {}: {} tokens kept", sampling.top_k, r.kept_after_top_k);
  if (sampling.top_p < 1) steps += fmt::format("; top-p {}: {} kept", sampling.top_p, r.kept);
  write(out, steps + "; renormalized: the column \"drawn from\"", options);
  write(out,
        fmt::format("  the draw: u = {} (random_sample number {} of np.random.RandomState({})) fell in [{}, {}) of "
                    "the cumulative \"drawn from\", in vocabulary order: \"{}\"",
                    format_number(*r.draw, std::max(options.array.precision, 6)), draws + 1, seed,
                    format_number(r.cumulative_before, options.array.precision),
                    format_number(r.cumulative_after, options.array.precision), model.vocab.token(r.id)),
        options);
}

}  // namespace attn
