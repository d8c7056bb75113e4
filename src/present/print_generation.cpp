#include "present/print_generation.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/step_roles.h"
#include "forward/ablation.h"

#include "present/array_format.h"
#include "present/heatmap.h"
#include "present/labeled_table.h"
#include "present/model_overview.h"
#include "present/tensor_stats.h"
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

// The entry of the decoder's `layer` and `block` that plays `role`, or of that kind.
const TraceEntry* find_role(const Trace& trace, int layer, Block block, bool (*role)(StepKind)) {
  for (const auto& e : trace.entries())
    if (e.id.layer == layer && e.id.block == block && role(e.id.kind) && e.id.stack == Stack::Decoder) return &e;
  return nullptr;
}

// The decoder's `layer`'s self-attention projection `letter` ("q", "k", "v").
const TraceEntry* find_projection(const Trace& trace, int layer, const std::string& letter) {
  for (const auto& e : trace.entries())
    if (e.id.layer == layer && e.id.block == Block::MaskedSelfAttention && is_projection(e.id.kind) &&
        projection_letter(e.id.kind) == letter && e.id.stack == Stack::Decoder)
      return &e;
  return nullptr;
}

const TraceEntry* find_kind(const Trace& trace, int layer, Block block, StepKind kind) {
  for (const auto& e : trace.entries())
    if (e.id.layer == layer && e.id.block == block && e.id.kind == kind && e.id.stack == Stack::Decoder) return &e;
  return nullptr;
}

std::string shape_text(const CachedHeads& cache) {
  // (H, t, d), or (G, t, d) when G key/value heads are shared by the H query heads
  const Shape shape = cache.shape();
  return fmt::format("({}={}, t={}, d={})", cache.axes()[0], shape[0], shape[1], shape[2]);
}

// Where the generation is drawn: the terminal's text (exactly as it was printed before the
// lesson existed) and the lesson's page, either or both.
class Drawing {
 public:
  Drawing(std::ostream* out, PageRenderer* page, const WalkthroughOptions& options)
      : out_(out), page_(page), options_(options) {}
  // A blank line on the terminal, before a section.
  void blank() {
    if (out_) *out_ << "\n";
  }
  // "══ Token 2: ... ══": a section of the page.
  void section(const std::string& text) {
    if (out_) write(*out_, text, options_);
    if (page_) page_->layer_header(text);
  }
  // "── decoder.0: the new row ──"
  void part(const std::string& text) {
    if (out_) write(*out_, text, options_);
    if (page_) page_->block_header(text);
  }
  // A paragraph, indented by two spaces on the terminal.
  void line(const std::string& text) {
    if (out_) write(*out_, text, options_);
    if (page_) page_->line(text.substr(text.find_first_not_of(' ')));
  }
  // Lines laid out already (a row of shades per head), as they are.
  void lines(const std::string& text) {
    if (out_) *out_ << text;
    if (page_) page_->indented(text);
  }
  void tensor(const std::string& label, const Tensor& t) {
    if (out_) write_tensor(*out_, label, t, options_);
    if (page_) page_->tensor({t, label, "", false, false});
  }
  // A labelled table under its caption.
  void table(const std::string& caption, const Tensor& matrix, const std::vector<std::string>& rows,
             const std::vector<std::string>& columns) {
    if (out_) {
      write(*out_, caption, options_);
      LabeledTableOptions format;
      format.precision = options_.array.precision;
      *out_ << indented(render_labeled_table(matrix, rows, columns, format));
    }
    if (page_) page_->table(caption.substr(caption.find_first_not_of(' ')), matrix, rows, columns);
  }

 private:
  std::ostream* out_;
  PageRenderer* page_;
  const WalkthroughOptions& options_;
};

}  // namespace

void print_cache_after_prompt(std::ostream* out, PageRenderer* page, const KvCacheDecoder& decoder, const Model& model,
                              const WalkthroughOptions& options) {
  Drawing draw(out, page, options);
  draw.blank();
  draw.part("── The KV cache after the prompt ──");
  const ModelConfig c = model.config.decoder_config();  // the cache is the decoder's
  draw.line(fmt::format(
      "  Each layer keeps the keys and values its self-attention computed for every position (the {} and v_heads "
      "above{}): a new token's query needs them, and they never change, since no position sees a later one.{}",
      c.positional_encoding == PositionalEncoding::RoPE ? "k_rope" : "k_heads",
      c.kv_heads() != c.num_heads ? fmt::format(", G={} key/value head{} before the repeat to H={}", c.kv_heads(),
                                                c.kv_heads() == 1 ? "" : "s", c.num_heads)
                                  : "",
      !c.sliding_window ? std::string()
      : c.windowed_layers.empty()
          ? fmt::format(" With the sliding window a query reads the last W = {} of them.", c.sliding_window)
          : fmt::format(" In the local layers a query reads the last W = {} of them.", c.sliding_window)));
  for (std::size_t j = 0; j < decoder.caches().size(); ++j) {
    const LayerCache& c = decoder.caches()[j];
    std::string line = fmt::format("  decoder.{}: K {}, V {}", j, shape_text(c.k), shape_text(c.v));
    if (model.has_target() && !c.cross_k.empty())
      line += fmt::format("; cross-attention K, V {} (the source's, fixed)", shape_text(c.cross_k));
    draw.line(line);
  }
}

namespace {

// A token in a heading: "\"cat\"", and a checkpoint's readable piece with its id, "\"␣cat\" (3797)".
std::string quoted_token(const Model& model, const std::string& token) {
  const std::string shown = "\"" + readable_token(model, token) + "\"";
  if (!model.checkpoint.present()) return shown;
  const auto id = model.vocab.exact(token);
  return id ? fmt::format("{} ({})", shown, *id) : shown;
}

}  // namespace

namespace {

// The token's heading and what the cache saved.
void print_step_heading(Drawing& draw, const KvCacheDecoder& decoder, const Model& model,
                        const std::vector<std::string>& tokens, std::size_t number) {
  const std::size_t position = tokens.size() - 1;
  const StepCost cost = decoder.last_cost();
  draw.blank();
  draw.section(fmt::format("══ Token {}: {} fed back at position {}; only its row is computed ══", number,
                           quoted_token(model, tokens.back()), position));
  draw.line(fmt::format(
      "  reused from the cache: the keys and values of positions 0-{} in each of {} layer{}{}; this "
      "row took {} multiply-adds, a full pass over the {} positions {} ({} saved)",
      position - 1, model.decoder.size(), model.decoder.size() == 1 ? "" : "s",
      model.has_target() ? ", and the source's cross-attention keys and values" : "", grouped(cost.with_cache),
      position + 1, grouped(cost.without_cache), grouped(cost.without_cache - cost.with_cache)));
}

// "  q = [ 0.1234 -0.5678 ...  0.9012  0.3456]   μ=0.0123 σ=0.4567": a big model's new row,
// its first and last numbers and its statistics (--full prints every number).
void compact_row(Drawing& draw, const std::string& name, const Tensor& t, const WalkthroughOptions& options) {
  Tensor row({t.size()}, {t.axes.empty() ? "N" : t.axes.back()});
  std::copy(t.data.begin(), t.data.end(), row.data.begin());
  ArrayFormatOptions array = options.array;
  array.threshold = 4;
  array.edge_items = 2;
  const TensorStats s = compute_tensor_stats(row);
  const std::string prefix = "  " + name + " = ";
  draw.lines(fmt::format("{}{}   μ={:.4g} σ={:.4g}\n", prefix, format_array(row, array, display_width(prefix)),
                         s.mean == 0 ? 0.0 : s.mean, s.std));
}

// How many positions each character of a head's row stands for, so that `per_line` heads
// fit on a line of `width` columns: 1 while the row fits whole.
struct ShadeLayout {
  std::size_t positions = 0, bin = 1, glyphs = 0, label = 0, per_line = 1;
};

ShadeLayout shade_layout(std::size_t heads, std::size_t positions, std::size_t width) {
  ShadeLayout l;
  l.positions = positions;
  l.label = fmt::format("h{}", heads - 1).size();
  // "  " + per head: label, " [", the glyphs, "]", two spaces apart; three heads a line at least
  const std::size_t wanted = std::min<std::size_t>(heads, 3);
  const std::size_t frame = l.label + 3, room = width > 2 ? width - 2 : 1;
  const std::size_t cell = room / wanted >= frame + 2 + 1 ? room / wanted - 2 : frame + 1;
  const std::size_t most = cell - frame;
  l.bin = (positions + most - 1) / most;
  l.glyphs = (positions + l.bin - 1) / l.bin;
  l.per_line = std::max<std::size_t>(1, (room + 2) / (frame + l.glyphs + 2));
  return l;
}

// Each head's weights over the cached positions as a line of shades, heads side by side:
//   h0 [█  ░   ▒]  h1 [ ░▓     ]  h2 [...]
std::string head_shade_lines(const Tensor& weights, std::size_t heads, const ShadeLayout& l, HeatmapStyle style) {
  std::string out, line;
  for (std::size_t h = 0; h < heads; ++h) {
    std::string glyphs;
    for (std::size_t g = 0; g < l.glyphs; ++g) {
      double mass = 0;  // the weight of the positions this character stands for
      for (std::size_t k = g * l.bin; k < std::min(l.positions, (g + 1) * l.bin); ++k)
        mass += weights.data[h * l.positions + k];
      glyphs += heatmap_glyph(mass, style);
    }
    line += fmt::format("  {:<{}} [{}]", fmt::format("h{}", h), l.label, glyphs);
    if ((h + 1) % l.per_line == 0 || h + 1 == heads) {
      line.erase(line.find_last_not_of(' ') + 1);
      out += line + "\n";
      line.clear();
    }
  }
  return out;
}

// A big model's token: per layer the new q, k, v as their edges and statistics and each
// head's weights as a line of shades; one page for GPT-2 small's 12 layers of 12 heads.
void print_compact_layers(Drawing& draw, const Trace& step, const KvCacheDecoder& decoder, const Model& model,
                          const std::vector<std::string>& tokens, const WalkthroughOptions& options) {
  const ModelConfig& c = model.config;
  const LayerCache& cache = decoder.caches().front();
  const std::size_t from = c.sliding_window && tokens.size() > c.sliding_window ? tokens.size() - c.sliding_window : 0;
  const HeatmapStyle style = options.heatmap_style.value_or(HeatmapStyle::Shade) == HeatmapStyle::Ascii
                                 ? HeatmapStyle::Ascii
                                 : HeatmapStyle::Shade;
  const ShadeLayout l = shade_layout(c.num_heads, tokens.size() - from, options.array.line_width);
  const std::string each = l.bin == 1 ? "one character per position"
                                      : fmt::format("one character per {} positions, their weights summed", l.bin);
  draw.line(fmt::format(
      "  each layer below: the new row's q, k and v (their first and last numbers, mean μ and standard "
      "deviation σ), then each head's weights over positions {}-{} ({}; {}); the KV cache grew to K {}, V {} in "
      "every layer; --full prints every number",
      from, tokens.size() - 1, each,
      style == HeatmapStyle::Ascii ? "\" .:-=+*#%@\" tenths of 1" : "\" \"<.2 ░<.4 ▒<.6 ▓<.8 █ ≤1", shape_text(cache.k),
      shape_text(cache.v)));
  for (std::size_t j = 0; j < model.decoder.size(); ++j) {
    const int layer = static_cast<int>(j);
    draw.part(fmt::format("── decoder.{}: the new row ──", j));
    for (const char* name : {"q", "k", "v"})
      if (const TraceEntry* e = find_projection(step, layer, name)) compact_row(draw, name, e->tensor, options);
    const TraceEntry* weights = find_role(step, layer, Block::MaskedSelfAttention, is_attention_pattern);
    if (weights && weights->tensor.shape.back() == l.positions && weights->tensor.size() == c.num_heads * l.positions)
      draw.lines(head_shade_lines(weights->tensor, c.num_heads, l, style));
  }
}

}  // namespace

void print_generation_step(std::ostream* out, PageRenderer* page, const Trace& step, const KvCacheDecoder& decoder,
                           const Model& model, const std::vector<std::string>& tokens, std::size_t number,
                           const WalkthroughOptions& options) {
  Drawing draw(out, page, options);
  print_step_heading(draw, decoder, model, tokens, number);
  if (is_big_model(model) && !options.full) {
    print_compact_layers(draw, step, decoder, model, tokens, options);
    return;
  }
  const std::size_t position = tokens.size() - 1;
  std::vector<std::string> keys;
  for (const auto& t : tokens) keys.push_back(token_label("K", readable_token(model, t)));
  for (std::size_t j = 0; j < model.decoder.size(); ++j) {
    const int l = static_cast<int>(j);
    const LayerCache& cache = decoder.caches()[j];
    draw.part(fmt::format("── decoder.{}: the new row ──", j));
    for (const char* name : {"q", "k", "v"})
      if (const TraceEntry* e = find_projection(step, l, name))
        draw.tensor(fmt::format("{} (position {}, = row · W_{})", name, position, name), e->tensor);
    const ModelConfig c = model.config.decoder_config();
    const bool rope = c.positional_encoding == PositionalEncoding::RoPE;
    draw.line(fmt::format("  KV cache: K {}, V {}   (one row more: this position's k and v, split into heads{})",
                          shape_text(cache.k), shape_text(cache.v), rope ? "; k turned by RoPE at its position" : ""));
    if (c.kv_heads() != c.num_heads) {
      const std::size_t r = c.num_heads / c.kv_heads();
      draw.line(fmt::format(
          "  {} (query head h reads cache head h // {}): the cache is H/G = {} times smaller than (H, t, d)",
          c.kv_heads() == 1 ? fmt::format("G=1 key/value head, shared by all H = {} query heads", c.num_heads)
                            : fmt::format("G={} key/value heads, each shared by H/G = {} query heads", c.kv_heads(), r),
          r, r));
    }
    // with a sliding window the query sees the last W cached positions only
    const std::size_t window = c.window_of(l);
    const std::size_t from = window && keys.size() > window ? keys.size() - window : 0;
    const std::vector<std::string> seen(keys.begin() + static_cast<std::ptrdiff_t>(from), keys.end());
    const TraceEntry* scaled = find_kind(step, l, Block::MaskedSelfAttention, StepKind::ScaledScores);
    const TraceEntry* weights = find_role(step, l, Block::MaskedSelfAttention, is_attention_pattern);
    if (scaled && weights && seen.size() == scaled->tensor.shape.back()) {
      std::vector<std::string> heads;
      for (std::size_t h = 0; h < c.num_heads; ++h) heads.push_back(fmt::format("head {}", h));
      const std::string scale =
          c.score_scale == ScoreScale::None ? std::string("q · kᵀ") : fmt::format("q · kᵀ / √{}", c.d_head);
      draw.table(
          from ? fmt::format("  the new query against the last {} cached keys (the sliding window), {}:", window, scale)
               : fmt::format("  the new query against every cached key, {} (no mask needed: every cached "
                             "position is at or before this one):",
                             scale),
          head_rows(scaled->tensor), heads, seen);
      draw.table("  weights = softmax of each row:", head_rows(weights->tensor), heads, seen);
    }
    if (model.has_target())
      draw.line(fmt::format("  cross-attention: the new query against the source's cached K {} alone",
                            shape_text(cache.cross_k)));
  }
}

namespace {

// Sampled tokens beyond this many are summarized: the table shows the top ones.
constexpr std::size_t kMostDrawnShown = 12;

// The interval of each token that could be drawn, in the order the draw adds them up
// (vocabulary order, as np.searchsorted over np.cumsum does), not the table's order.
std::string draw_intervals(const SamplingResult& r, const Model& model, int precision) {
  std::string out;
  double cumulative = 0;
  for (std::size_t id = 0; id < r.distribution.size(); ++id) {
    if (r.distribution[id] == 0) continue;
    const double before = cumulative;
    cumulative += r.distribution[id];
    out +=
        fmt::format("{}\"{}\" [{}, {}){}", out.empty() ? "" : ", ", readable_token(model, id),
                    format_number(before, precision), format_number(cumulative, precision), id == r.id ? " ← u" : "");
  }
  return "  the intervals, in vocabulary order: " + out;
}

}  // namespace

void print_choice(std::ostream* out, PageRenderer* page, const SamplingResult& r, const SamplingOptions& sampling,
                  const Model& model, const std::vector<std::string>& tokens, std::size_t number, std::size_t draws,
                  std::uint32_t seed, const WalkthroughOptions& options) {
  Drawing draw(out, page, options);
  draw.blank();
  draw.part(fmt::format("── Choosing token {} (after {}) ──", number, quoted_token(model, tokens.back())));
  // The labelled table: the most probable tokens, with the distribution drawn from.
  const std::size_t V = r.probabilities.size();
  std::vector<std::size_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return r.probabilities[a] > r.probabilities[b]; });
  const bool sampled = r.draw.has_value();
  // A draw shows every token it could pick (up to kMostDrawnShown): the text says how many
  // were kept, and the table shows them.
  const std::size_t k =
      std::min(V, sampled && r.kept <= kMostDrawnShown ? std::max(options.top_k, r.kept) : options.top_k);
  Tensor table({k, sampled ? std::size_t{2} : std::size_t{1}}, {"k", "p"});
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < k; ++i) {
    rows.push_back(fmt::format("{}. \"{}\"", i + 1, readable_token(model, order[i])));
    table.data[i * table.shape[1]] = r.probabilities[order[i]];
    if (sampled) table.data[i * 2 + 1] = r.distribution[order[i]];
  }
  std::string never;
  for (std::size_t id : model.vocab.never_written_ids())
    never += (never.empty() ? "" : ", ") + readable_token(model, id);
  std::vector<std::string> columns = {"p"};
  if (sampled) columns.push_back("drawn from");
  draw.table(fmt::format("  the next-token distribution p = softmax(logits), its top {}{}:", k,
                         never.empty() ? "" : " (" + never + " never written)"),
             table, rows, columns);
  if (!sampled) {
    draw.line(fmt::format("  greedy (temperature 0): the most probable token, \"{}\"", readable_token(model, r.id)));
    return;
  }
  std::string steps =
      fmt::format("  temperature {}: p = softmax(logits / {})", sampling.temperature, sampling.temperature);
  if (sampling.top_k) steps += fmt::format("; top-k {}: {} tokens kept", sampling.top_k, r.kept_after_top_k);
  if (sampling.top_p < 1) steps += fmt::format("; top-p {}: {} kept", sampling.top_p, r.kept);
  draw.line(steps + "; renormalized: the column \"drawn from\"");
  draw.line(
      fmt::format("  the draw: u = {} (random_sample number {} of np.random.RandomState({})) fell in [{}, {}) of "
                  "the cumulative \"drawn from\", in vocabulary order: \"{}\"",
                  format_number(*r.draw, std::max(options.array.precision, 6)), draws + 1, seed,
                  format_number(r.cumulative_before, options.array.precision),
                  format_number(r.cumulative_after, options.array.precision), readable_token(model, r.id)));
  if (r.kept <= kMostDrawnShown) draw.line(draw_intervals(r, model, options.array.precision));
}

namespace {

// Where generation stops, for its heading: "stops after \"<EOS>\"", or a checkpoint's
// "stops at eos_token_id 50256 (␣<|endoftext|>)".
std::string stop_text(const Generation& g, const Model& model) {
  std::string out;
  if (g.stop_id() || g.eos_ids().empty()) out = fmt::format("stops after \"{}\"", printable(g.rules().stop));
  if (g.eos_ids().empty()) return out;
  std::string ids;
  for (const std::size_t id : g.eos_ids())
    ids += fmt::format("{}{} ({})", ids.empty() ? "" : ", ", id,
                       id < model.vocab.size() ? printable(readable_token(model, model.vocab.token(id))) : "?");
  return out + (out.empty() ? "" : ", ") +
         fmt::format("stops at eos_token_id{} {}", g.eos_ids().size() == 1 ? "" : "s", ids);
}

}  // namespace

void print_generation_start(std::ostream* out, PageRenderer* page, const Generation& generation, const Model& model,
                            const Ablation& ablation, std::size_t width, const std::string& choice) {
  const std::size_t start = generation.tokens().size();
  const SamplingChoice& s = generation.sampling();
  const std::string how = !choice.empty() ? choice
                          : s.temperature == 0
                              ? "greedy (temperature 0)"
                              : fmt::format("sampled (temperature {}, seed {})", s.temperature, s.seed);
  if (out)
    *out << wrapped_path(fmt::format("Generating with {}: {} token{} to start from, at most {} new, {}; {}",
                                     printable(model.source), start, start == 1 ? "" : "s",
                                     generation.rules().max_new_tokens, how, stop_text(generation, model)),
                         width)
         << "\n";
  if (out && !ablation.empty())
    *out << fmt::format("ablated: {}, in the prompt's run and every step\n", ablation_label(ablation));
  const std::string first =
      fmt::format("══ Token 1: the whole {}, every step ══", model.decoder_only()         ? "prompt"
                                                             : model.checkpoint.present() ? "source and the start token"
                                                                                          : "source and <BOS>");
  if (out) *out << "\n" << first << "\n";
  if (page) page->layer_header(first);
}

void print_generation_note(std::ostream* out, PageRenderer* page, const std::string& note) {
  if (out) *out << "\nnote: " << note << "\n";
  if (page) page->note(note);
}

void print_generated(std::ostream* out, PageRenderer* page, const Generation& generation, const Model& model) {
  // As the walkthrough shows it: a checkpoint's text in quotes (it starts with its space),
  // escaped as every text shown is.
  const std::string decoded = generation.decoded_text();
  const std::string text = model.checkpoint.present() ? printable("\"" + decoded + "\"") : decoded;
  const std::size_t n = generation.generated().size();
  const std::string count = fmt::format("{} token{}", n, n == 1 ? "" : "s");
  const std::string saved =
      fmt::format("The KV cache saved {} multiply-adds over running the whole prefix for every token.",
                  grouped(generation.saved()));
  if (out) *out << fmt::format("\nGenerated {}: {}\n", count, text) << saved << "\n";
  if (page) {
    page->layer_header(fmt::format("══ Generated {}: {} ══", count, text));
    page->line(saved);
  }
}

void print_generated_alone(std::ostream& out, const Generation& generation, bool json) {
  if (!json) {
    out << generation.decoded_text() << "\n";
    return;
  }
  out << nlohmann::json{{"ids", generation.generated_ids()}, {"text", generation.decoded_text()}}.dump(
             -1, ' ', false, nlohmann::json::error_handler_t::replace)
      << "\n";
}

}  // namespace attn
