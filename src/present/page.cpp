#include "present/page.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/parameters.h"
#include "attn/trace.h"
#include "present/explanations.h"
#include "present/print_limits.h"
#include "present/tensor_views.h"
#include "present/terminal.h"

namespace attn {

bool is_decoder_only(const Model& model) {
  return model.decoder_only() || (model.decoder.empty() && model.output.present && model.config.causal);
}

namespace {

// The backward pass walks the same layers again, in reverse: a layer's gradients are a new
// section of the walkthrough, with their own header.
bool same_layer(const StepId& a, const StepId& b) {
  return a.stack == b.stack && a.layer == b.layer && a.gradient == b.gradient;
}

bool same_block(const StepId& a, const StepId& b) {
  return a.in_layer() == b.in_layer() && same_layer(a, b) && a.block == b.block;
}

// "══ Encoder layer 0 of 6 (post-norm: LayerNorm(x + f(x))) ══"; wider than `width`, the
// norm's placement goes on a second line.
std::string layer_header(const StepId& id, const Model& model, std::size_t width, bool with_kind = true) {
  const bool encoder = id.stack == Stack::Encoder;
  const auto layer = static_cast<std::size_t>(id.layer);
  const bool full = encoder ? model.encoder[layer].full : true;
  const char* stack = is_decoder_only(model) ? "Decoder-only (GPT-style)" : encoder ? "Encoder" : "Decoder";
  const char* norm = root_mean_square(model.config.norm) ? "RMSNorm" : "LayerNorm";
  const std::string kind = !full                     ? std::string(" (an attention block alone)")
                           : model.config.norm_first ? fmt::format(" (pre-norm: x + f({}(x)))", norm)
                                                     : fmt::format(" (post-norm: {}(x + f(x)))", norm);
  const std::string title = fmt::format("══ {}{} layer {} of {}", id.gradient ? "Backward: " : "", stack, layer,
                                        encoder ? model.encoder.size() : model.decoder.size());
  if (!with_kind) return title + " ══";
  const std::string one_line = title + kind + " ══";
  if (display_width(one_line) <= width || display_width(title + " ══") > width) return one_line;
  return title + " ══\n  " + kind.substr(1);
}

std::string heads_text(const ModelConfig& c) {
  return fmt::format("H={} head{} of d={}", c.num_heads, c.num_heads == 1 ? "" : "s", c.d_head);
}

}  // namespace

// The step that printed `why` already, 0 when none did (or --full prints it again).
int Page::explained_at(const std::string& why) const {
  const auto earlier = explained_.find(why);
  return earlier == explained_.end() || options_.full || !explanation_for(why) ? 0 : earlier->second;
}

void Page::explanation(const std::string& why) {
  const char* text = explanation_for(why);
  if (!text || explained_at(why)) return;
  explained_.emplace(why, step_);
  // The text is one paragraph.
  std::string paragraph;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) paragraph += (paragraph.empty() ? "" : " ") + l;
  static const std::string kOrderExample = "\"I love AI\" from \"AI love I\"";
  const std::size_t example = cited_order_.empty() ? std::string::npos : paragraph.find(kOrderExample);
  if (example != std::string::npos) paragraph.replace(example, kOrderExample.size(), cited_order_);
  renderer_.explanation(paragraph);
}

void Page::cite_order(const std::vector<std::string>& words) {
  cited_order_.clear();
  if (words.size() < 2) return;
  const std::vector<std::string> first(words.begin(), words.begin() + std::min<std::ptrdiff_t>(3, words.size()));
  const std::vector<std::string> reversed(first.rbegin(), first.rend());
  cited_order_ = fmt::format("\"{}\" from \"{}\"", fmt::join(first, " "), fmt::join(reversed, " "));
}

int Page::first_detailed(const std::string& detail_key) const {
  const auto found = detailed_steps_.find(detail_key);
  return found == detailed_steps_.end() ? 0 : found->second;
}

bool Page::begin_step(const char* shown_kind, const std::string& title, const std::string& why,
                      const std::string& detail_key) {
  flush_formula();
  ++step_;
  shown_ = options_.filter.selects(step_, shown_kind, layer_ ? &*layer_ : nullptr) && !layer_summarized();
  if (!shown_) return false;
  // In full: the first step of its kind, every step with --full, and every step the
  // learner picked with --steps or --layer; the others are one line each.
  const std::string key = detail_key.empty() ? shown_kind : detail_key;
  const auto first = detailed_steps_.find(key);
  const bool picked = !options_.filter.ranges.empty() || !options_.filter.kinds.empty() || options_.filter.layer;
  const int as_step = first == detailed_steps_.end() ? 0 : first->second;
  detailed_ = options_.full || picked || options_.list_only || !as_step || !renderer_.compacts_repeats();
  compact_ = !detailed_;
  compact_as_ = compact_ ? as_step : 0;
  compact_formula_.clear();
  compact_shape_.clear();
  detailed_steps_.emplace(key, step_);
  renderer_.start_step(step_);
  write_headers();
  if (options_.list_only) {
    // attn steps: one compact entry per step.
    renderer_.list_entry(step_, shown_kind, title);
    return true;
  }
  if (compact_) return true;  // one line, written once its formula and shapes are known
  // A big model's overview works the arithmetic of a kind once: a later step that the same
  // "why" explains (the final LayerNorm, as step 6's) points there instead.
  worked_at_ = options_.overview && !picked ? explained_at(why) : 0;
  renderer_.step_title({step_, shown_kind, title, options_.explanations ? explained_at(why) : 0, as_step});
  if (options_.explanations) explanation(why);
  return true;
}

Page::Page(PageRenderer& renderer, const Model& model, const WalkthroughOptions& options)
    : renderer_(renderer), model_(model), options_(options) {
  const CheckpointSource& origin = model.checkpoint;
  if (!origin.present()) return;
  const std::string what = printable(fmt::format("Model: {} read from {};", origin.architecture, origin.folder));
  const std::string tokenizer =
      fmt::format("tokenizer {} of {} tokens", model.tokenizer->kind(), model.tokenizer->size());
  // One line when it fits the page's width, else the tokenizer on a line of its own.
  const bool fits = display_width(what) + 1 + tokenizer.size() <= width();
  // (a long folder's path wrapped like any other line)
  pending_model_header_ = wrapped_path(what, width()) + (fits ? " " : "\n  ") + tokenizer;
  for (const auto& p : parameters(model)) {
    const auto found = origin.tensor_names.find(parameter_name(p.id));
    if (found != origin.tensor_names.end()) checkpoint_names_[p.tensor] = found->second;
  }
}

// The headers of the layer and block a step is the first shown step of.
void Page::write_headers() {
  if (!pending_model_header_.empty() && !options_.list_only) renderer_.raw(pending_model_header_ + "\n");
  pending_model_header_.clear();
  if (!pending_layer_header_.empty()) renderer_.layer_header(pending_layer_header_);
  if (!pending_block_header_.empty()) renderer_.block_header(pending_block_header_);
  if (!pending_block_why_.empty() && options_.explanations && !options_.list_only) explanation(pending_block_why_);
  pending_layer_header_.clear();
  pending_block_header_.clear();
  pending_block_why_.clear();
}

void Page::enter(const StepId& id) {
  if (!id.in_layer()) {
    leave_layer();
  } else if (!layer_ || !same_layer(*layer_, id)) {
    layer_ = id;
    pending_layer_header_ = layer_header(id, model_, width());
    pending_block_header_.clear();
  }
  if (block_ && same_block(*block_, id)) return;
  block_ = id;
  const auto& c = model_.config;
  pending_block_header_.clear();
  pending_block_why_.clear();
  if (!id.in_layer()) return;
  const char* backward = id.gradient ? ", backward" : "";
  if (id.block == Block::SelfAttention || (id.block == Block::MaskedSelfAttention && model_.decoder_only())) {
    const bool causal = c.causal || model_.decoder_only();
    pending_block_header_ = fmt::format("── {}{}, {} (d_model N={}) ──",
                                        causal ? "Masked (causal) self-attention" : "Multi-head self-attention",
                                        backward, heads_text(c), c.d_model);
    if (is_decoder_only(model_)) pending_block_why_ = "decoder_self_attention";
    // a real encoder's (BERT's): what having no mask means
    if (!causal && !model_.has_decoder() && model_.checkpoint.present())
      pending_block_why_ = "bidirectional_self_attention";
  } else if (id.block == Block::MaskedSelfAttention) {
    pending_block_header_ =
        fmt::format("── Masked multi-head self-attention over the target{}, {} ──", backward, heads_text(c));
    pending_block_why_ = "decoder_self_attention";
  } else if (id.block == Block::CrossAttention) {
    pending_block_header_ = fmt::format("── Cross-attention to the encoder's output{}, {} ──", backward, heads_text(c));
    pending_block_why_ = "cross_attention";
  }
}

bool Page::layer_summarized() const {
  return options_.overview && renderer_.compacts_repeats() && layer_ && layer_->layer > 0 && !layer_->gradient;
}

void Page::layer_summary(const StepId& layer, const std::string& text) {
  flush_formula();
  renderer_.layer_header(layer_header(layer, model_, width(), false));
  renderer_.line(text);
  pending_layer_header_.clear();
  pending_block_header_.clear();
  pending_block_why_.clear();
}

void Page::aside(const std::string& header, const std::string& lines, const std::string& text) {
  flush_formula();
  renderer_.layer_header(header);
  if (!lines.empty()) renderer_.indented(lines);
  if (!text.empty()) renderer_.line(text);
}

void Page::aside_line(const std::string& text) { renderer_.line(text); }

void Page::aside_table(const TextTable& table) { renderer_.text_table(table); }

void Page::aside_heatmap(HeatmapView view) {
  view.in_overview = false;
  renderer_.heatmap(view);
}

std::string aligned_columns(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width(header.size(), 0);
  for (std::size_t k = 0; k < header.size(); ++k) width[k] = display_width(header[k]);
  for (const auto& row : rows)
    for (std::size_t k = 0; k < row.size() && k < width.size(); ++k)
      width[k] = std::max(width[k], display_width(row[k]));
  std::string text;
  const auto add = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t k = 0; k < cells.size() && k < width.size(); ++k) line += pad_right(cells[k], width[k]) + "  ";
    line.erase(line.find_last_not_of(' ') + 1);
    text += line + "\n";
  };
  add(header);
  for (const auto& row : rows) add(row);
  return text;
}

void Page::leave_layer() {
  layer_.reset();
  block_.reset();
  pending_layer_header_.clear();
  pending_block_header_.clear();
}

// A formula waits for the shapes that may follow it: the two share a line when they fit.
// A compact step keeps a formula's math and leaves out its comment, "   (...)" at the end.
void Page::formula(const std::string& text) {
  if (!shown_) return;
  if (compact_) {
    if (compact_formula_.empty()) compact_formula_ = text.substr(0, text.find("   ("));
    return;
  }
  flush_formula();
  pending_formula_ = text;
  const std::size_t comment = text.find("   (");
  if ((!detailed_ || options_.list_only) && comment != std::string::npos && text.back() == ')')
    pending_formula_.erase(comment);
}

// A compact step's line: "  31  K = Y · W_k -> (T=3,H*d=4)   (as step 6)".
void Page::flush_compact() {
  if (!compact_ || !shown_ || compact_written_ == step_) return;
  compact_written_ = step_;
  renderer_.compact_step(step_, compact_formula_, compact_shape_, compact_as_);
}

void Page::flush_formula() {
  flush_compact();
  if (pending_formula_.empty()) return;
  const std::string text = std::move(pending_formula_);
  pending_formula_.clear();
  renderer_.formula(text, "");
}

void Page::shapes(const std::string& text) {
  if (!shown_) return;
  if (compact_) {
    const std::size_t arrow = text.rfind("-> ");
    compact_shape_ = arrow == std::string::npos ? text : text.substr(arrow + 3);
    return;
  }
  const std::string formula = std::move(pending_formula_);
  pending_formula_.clear();
  renderer_.formula(formula, text);
}

void Page::line(const std::string& text) {
  flush_formula();
  if (full_text()) renderer_.line(text);
}

void Page::note(const std::string& text) {
  flush_formula();
  // Notes quote the user's words (an unknown token): shown escaped, never acted on.
  if (views_shown()) renderer_.note(printable(text));
}

void Page::indented(const std::string& text) {
  flush_formula();
  if (full_text()) renderer_.indented(text);
}

void Page::worked(const std::string& text, const char* heading) {
  flush_formula();
  if (!options_.worked || !detailed() || !full_text()) return;
  if (worked_at_ < 0) return;  // pointed to already
  if (worked_at_ > 0) {
    renderer_.line(fmt::format("(worked as at step {}; --steps {} works it here)", worked_at_, step_));
    worked_at_ = -1;
    return;
  }
  renderer_.worked(heading, text);
}

void Page::raw(const std::string& text) {
  flush_formula();
  if (full_text()) renderer_.raw(text);
}

void Page::side_by_side(const NamedTensors& matrices) {
  flush_formula();
  if (full_text()) renderer_.side_by_side(matrices);
}

void Page::labeled_vector(const std::string& label, const Tensor& row) {
  flush_formula();
  if (full_text()) renderer_.labeled_vector(label, row);
}

void Page::explain(const std::string& why) {
  flush_formula();
  if (full_text() && options_.explanations) explanation(why);
}

void Page::tensor(const std::string& label, const Tensor& full, bool integers) {
  flush_formula();
  if (!full_text()) return;
  // A copy only when --batch or --head slices it.
  const bool slicing = options_.filter.batch || options_.filter.head;
  const Tensor slice_of_full = slicing ? selected_slice(full, options_.filter) : Tensor();
  const Tensor& t = slicing ? slice_of_full : full;
  const bool sliced = t.rank() != full.rank();
  // Feed-forward-wide and vocabulary-wide tensors (hidden, W_1, dL/dlogits, dL/dE) are
  // summarized past wide_threshold, as the forward lesson's are; --full prints them whole.
  const bool wide = axis_of(t, "F") < t.rank() || axis_of(t, "V") < t.rank();
  const std::size_t threshold =
      wide && !options_.full ? std::min(options_.array.threshold, options_.wide_threshold) : options_.array.threshold;
  const bool summarized = t.size() > threshold;
  std::string slice;
  if (sliced) {
    std::string index;
    if (options_.filter.batch && axis_of(full, "B") < full.rank()) index += fmt::format("b={}", *options_.filter.batch);
    if (options_.filter.head && axis_of(full, "H") < full.rank())
      index += fmt::format("{}h={}", index.empty() ? "" : ",", *options_.filter.head);
    slice = "[" + index + "]";
  }
  renderer_.tensor(
      {t, label, slice, integers, options_.stats && !integers && (summarized || options_.full), threshold});
}

void Page::key_tensor(const std::string& label, const Tensor& t) {
  if (!compact_) return tensor(label, t);
  flush_formula();
  compact_ = false;  // written in full, compact or not
  tensor(label, t);
  compact_ = true;
}

void Page::weight(const std::string& label, const Tensor& w) {
  if (!options_.show_weights || !w.has_values()) return;
  const auto source = checkpoint_names_.find(&w);
  if (source != checkpoint_names_.end() && full_text())
    renderer_.line(fmt::format("{} = {}   (the checkpoint's tensor)", label, source->second));
  if (!w.stored) return tensor(label, w);
  // A checkpoint's weight kept as stored: widened for the printing alone (one weight at a
  // time, freed after), and only when the page shows it.
  if (full_text()) return tensor(label, widened(w));
  flush_formula();  // as tensor() does for what it does not show
}

void Page::weights(const std::vector<std::pair<std::string, const Tensor*>>& vectors) {
  flush_formula();
  if (!options_.show_weights || !full_text()) return;
  NamedTensors shown;
  bool all_vectors = true;
  for (const auto& [label, w] : vectors) {
    all_vectors = all_vectors && w->rank() == 1;
    shown.emplace_back(label, selected_slice(w->stored ? widened(*w) : *w, options_.filter));
  }
  if (all_vectors && renderer_.vectors_together(shown)) return;
  for (const auto& [l, v] : vectors) weight(l, *v);
}

void Page::heatmap(const HeatmapView& view) {
  flush_formula();
  if (!options_.views || !views_shown() || view.heads.empty()) return;
  if (!options_.overview || !renderer_.compacts_repeats() || view.heads.size() <= kOverviewHeatmapHeads)
    return renderer_.heatmap(view);
  // A big model's lesson draws a few heads; the overview after the layers names every one.
  HeatmapView first = view;
  first.heads.resize(kOverviewHeatmapHeads);
  if (first.masked.size() > kOverviewHeatmapHeads) first.masked.resize(kOverviewHeatmapHeads);
  first.titles.resize(kOverviewHeatmapHeads);
  first.footnote = fmt::format("(heads {}-{} left out: --layer {} --steps softmax draws them all, --head N one)",
                               kOverviewHeatmapHeads, view.heads.size() - 1, layer_ ? layer_->layer : 0);
  renderer_.heatmap(first);
}

void Page::table(const std::string& caption, const Tensor& matrix, const std::vector<std::string>& row_labels,
                 const std::vector<std::string>& column_labels) {
  if (!options_.views || !full_text()) return;
  flush_formula();
  renderer_.table(caption, matrix, row_labels, column_labels);
}

void Page::top_k(const TopKView& view) {
  flush_formula();
  if (full_text()) renderer_.top_k(view);
}

}  // namespace attn
