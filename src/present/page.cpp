#include "present/page.h"

#include <sstream>

#include <fmt/format.h>

#include "attn/error.h"
#include "present/array_format.h"
#include "present/explanations.h"
#include "present/heatmap.h"
#include "present/labeled_table.h"
#include "present/tensor_stats.h"
#include "present/tensor_views.h"
#include "present/terminal.h"

namespace attn {

bool is_decoder_only(const Model& model) {
  return model.decoder.empty() && model.output.present && model.config.causal;
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

// "══ Encoder layer 0 of 6 (post-norm: LayerNorm(x + f(x))) ══"
std::string layer_header(const StepId& id, const Model& model) {
  const bool encoder = id.stack == Stack::Encoder;
  const auto layer = static_cast<std::size_t>(id.layer);
  const bool full = encoder ? model.encoder[layer].full : true;
  const char* stack = !encoder ? "Decoder" : is_decoder_only(model) ? "Decoder-only" : "Encoder";
  // "Decoder-only" is 5 columns longer: its header names the norm's place without the formula,
  // to fit in 60 columns
  const bool short_norm = encoder && is_decoder_only(model);
  return fmt::format("══ {}{} layer {} of {}{} ══", id.gradient ? "Backward: " : "", stack, layer,
                     encoder ? model.encoder.size() : model.decoder.size(),
                     !full                     ? " (an attention block alone)"
                     : model.config.norm_first ? (short_norm ? " (pre-norm)" : " (pre-norm: x + f(LayerNorm(x)))")
                     : short_norm              ? " (post-norm)"
                                               : " (post-norm: LayerNorm(x + f(x)))");
}

std::string heads_text(const ModelConfig& c) {
  return fmt::format("H={} head{} of d={}", c.num_heads, c.num_heads == 1 ? "" : "s", c.d_head);
}

// How heatmap cells are drawn: as asked, else coloured when colour is on; never with escape
// sequences when colour is off.
HeatmapOptions heatmap_options(const WalkthroughOptions& options) {
  HeatmapOptions h;
  h.style = options.heatmap_style.value_or(options.color ? HeatmapStyle::Color : HeatmapStyle::Shade);
  if (h.style == HeatmapStyle::Color && !options.color) h.style = HeatmapStyle::Shade;
  h.depth = options.color_depth;
  return h;
}

}  // namespace

std::string Page::paint(const std::string& text, const char* code) const {
  return options_.color ? std::string("\x1b[") + code + "m" + text + kResetSequence : text;
}

// In list mode (attn steps) formulas and shapes are indented under the step's entry.
std::string Page::margin() const { return options_.list_only ? std::string(24, ' ') : "  "; }

void Page::write_wrapped(const std::string& indent, const std::string& text, const char* color) {
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    const std::string full = indent + l;
    for (const auto& piece : wrap_line(full, width(), hanging_indent(full, width())))
      out_ << (color ? paint(piece, color) : piece) << "\n";
  }
}

// The step that printed `why` already, 0 when none did (or --full prints it again).
int Page::explained_at(const std::string& why) const {
  const auto earlier = explained_.find(why);
  return earlier == explained_.end() || options_.full || !explanation_for(why) ? 0 : earlier->second;
}

void Page::explanation(const std::string& why) {
  const char* text = explanation_for(why);
  if (!text || explained_at(why)) return;
  explained_.emplace(why, step_);
  // The text is one paragraph: rewrapped to the line width, under the bar.
  std::string paragraph;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) paragraph += (paragraph.empty() ? "" : " ") + l;
  const std::size_t room = width() > 8 ? width() - 4 : 4;
  for (const auto& piece : wrap_line(paragraph, room, 0)) out_ << paint("  │ " + piece, "2") << "\n";
}

int Page::first_detailed(const std::string& detail_key) const {
  const auto found = detailed_steps_.find(detail_key);
  return found == detailed_steps_.end() ? 0 : found->second;
}

bool Page::begin_step(const char* shown_kind, const std::string& title, const std::string& why,
                      const std::string& detail_key) {
  flush_formula();
  ++step_;
  shown_ = options_.filter.selects(step_, shown_kind, layer_ ? &*layer_ : nullptr);
  if (!shown_) return false;
  // In full: the first step of its kind, every step with --full, and every step the
  // learner picked with --steps or --layer; the others are one line each.
  const std::string key = detail_key.empty() ? shown_kind : detail_key;
  const auto first = detailed_steps_.find(key);
  const bool picked = !options_.filter.ranges.empty() || !options_.filter.kinds.empty() || options_.filter.layer;
  detailed_ = options_.full || picked || options_.list_only || first == detailed_steps_.end();
  compact_ = !detailed_;
  compact_as_ = compact_ ? first->second : 0;
  compact_formula_.clear();
  compact_shape_.clear();
  detailed_steps_.emplace(key, step_);
  if (step_listener_) step_listener_(step_);
  const char* gap = options_.list_only ? "" : "\n";
  if (!pending_layer_header_.empty()) out_ << "\n" << paint(pending_layer_header_, "1;35") << "\n";
  if (!pending_block_header_.empty()) {
    out_ << gap;
    write_wrapped("", pending_block_header_, "35");
  }
  if (!pending_block_why_.empty() && options_.explanations && !options_.list_only) explanation(pending_block_why_);
  pending_layer_header_.clear();
  pending_block_header_.clear();
  pending_block_why_.clear();
  if (options_.list_only) {
    // attn steps: one compact entry per step.
    out_ << fmt::format("{:>4}  {:<17} {}\n", step_, shown_kind, title);
    return true;
  }
  if (compact_) return true;  // one line, written once its formula and shapes are known
  // A "why" printed at an earlier step is pointed back to on the title line.
  const int earlier = options_.explanations ? explained_at(why) : 0;
  const std::string head =
      fmt::format("── Step {}: {} {}", step_, title, earlier ? fmt::format("(why: step {}) ", earlier) : "");
  std::string rule;
  for (std::size_t n = display_width(head); n < std::min<std::size_t>(72, width()); ++n) rule += "─";
  for (const auto& piece : wrap_line(head + rule, width(), 3)) out_ << paint(piece, "1;36") << "\n";
  if (options_.explanations) explanation(why);
  return true;
}

void Page::enter(const StepId& id) {
  if (!id.in_layer()) {
    leave_layer();
  } else if (!layer_ || !same_layer(*layer_, id)) {
    layer_ = id;
    pending_layer_header_ = layer_header(id, model_);
    pending_block_header_.clear();
  }
  if (block_ && same_block(*block_, id)) return;
  block_ = id;
  const auto& c = model_.config;
  pending_block_header_.clear();
  pending_block_why_.clear();
  if (!id.in_layer()) return;
  const char* backward = id.gradient ? ", backward" : "";
  if (id.block == Block::SelfAttention) {
    pending_block_header_ = fmt::format("── {}{}, {} (d_model N={}) ──",
                                        c.causal ? "Masked (causal) self-attention" : "Multi-head self-attention",
                                        backward, heads_text(c), c.d_model);
    if (is_decoder_only(model_)) pending_block_why_ = "decoder_self_attention";
  } else if (id.block == Block::MaskedSelfAttention) {
    pending_block_header_ =
        fmt::format("── Masked multi-head self-attention over the target{}, {} ──", backward, heads_text(c));
    pending_block_why_ = "decoder_self_attention";
  } else if (id.block == Block::CrossAttention) {
    pending_block_header_ = fmt::format("── Cross-attention to the encoder's output{}, {} ──", backward, heads_text(c));
    pending_block_why_ = "cross_attention";
  }
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
  if (!compact_intro_) {
    compact_intro_ = true;
    write_wrapped("  ", "(kinds shown above: one line each from here on; --full shows all)", "2");
  }
  const std::string shape = compact_shape_.empty() ? "" : " -> " + compact_shape_;
  const std::string text = fmt::format("{:>4}  {}{}   (as step {})", step_, compact_formula_, shape, compact_as_);
  for (const auto& piece : wrap_line(text, width(), 6)) out_ << paint(piece, "36") << "\n";
}

void Page::flush_formula() {
  flush_compact();
  if (pending_formula_.empty()) return;
  const std::string text = std::move(pending_formula_);
  pending_formula_.clear();
  write_wrapped(margin(), text, "36");
}

void Page::shapes(const std::string& text) {
  if (!shown_) return;
  if (compact_) {
    const std::size_t arrow = text.rfind("-> ");
    compact_shape_ = arrow == std::string::npos ? text : text.substr(arrow + 3);
    return;
  }
  const std::string joined = margin() + pending_formula_ + "   " + text;
  if (!pending_formula_.empty() && !options_.list_only && display_width(joined) <= width()) {
    out_ << margin() << paint(pending_formula_, "36") << "   " << text << "\n";
    pending_formula_.clear();
    return;
  }
  flush_formula();
  write_wrapped(margin(), text);
}

void Page::line(const std::string& text) {
  flush_formula();
  if (full_text()) write_wrapped("  ", text);
}

void Page::note(const std::string& text) {
  flush_formula();
  // Notes quote the user's words (an unknown token): shown escaped, never acted on.
  if (views_shown()) write_wrapped("  ", "note: " + printable(text), "33");
}

void Page::indented(const std::string& text) {
  flush_formula();
  if (full_text()) write_wrapped("    ", text);
}

void Page::worked(const std::string& text, const char* heading) {
  flush_formula();
  if (!options_.worked || !detailed() || !full_text()) return;
  out_ << "  " << paint(heading, "32") << "\n";
  indented(text);
}

void Page::raw(const std::string& text) {
  flush_formula();
  if (full_text()) out_ << text;
}

void Page::explain(const std::string& why) {
  flush_formula();
  if (full_text() && options_.explanations) explanation(why);
}

void Page::tensor(const std::string& label, const Tensor& full, bool integers) {
  flush_formula();
  if (!full_text()) return;
  const Tensor t = selected_slice(full, options_.filter);
  const bool sliced = t.rank() != full.rank();
  const bool summarized = t.size() > options_.array.threshold;
  if (options_.stats && !integers && (summarized || options_.full))
    write_wrapped("  ", format_tensor_stats(t, label.empty() ? "tensor" : label), "2");
  ArrayFormatOptions array = options_.array;
  array.integers = integers;
  std::string prefix = label;
  if (sliced) {
    std::string index;
    if (options_.filter.batch && axis_of(full, "B") < full.rank()) index += fmt::format("b={}", *options_.filter.batch);
    if (options_.filter.head && axis_of(full, "H") < full.rank())
      index += fmt::format("{}h={}", index.empty() ? "" : ",", *options_.filter.head);
    prefix += "[" + index + "]";
  }
  if (!prefix.empty()) prefix += " = ";
  out_ << prefix << format_array(t, array, display_width(prefix)) << "\n";
}

void Page::key_tensor(const std::string& label, const Tensor& t) {
  if (!compact_) return tensor(label, t);
  flush_formula();
  compact_ = false;  // written in full, compact or not
  tensor(label, t);
  compact_ = true;
}

void Page::weight(const std::string& label, const Tensor& w) {
  if (options_.show_weights && !w.data.empty()) tensor(label, w);
}

void Page::weights(const std::vector<std::pair<std::string, const Tensor*>>& vectors) {
  flush_formula();
  if (!options_.show_weights || !full_text()) return;
  std::string line;
  for (const auto& [label, w] : vectors) {
    const Tensor t = selected_slice(*w, options_.filter);
    const std::string text = label + " = " + format_array(t, options_.array, label.size() + 3);
    if (w->rank() != 1 || text.find('\n') != std::string::npos || t.size() > options_.array.threshold) {
      for (const auto& [l, v] : vectors) weight(l, *v);
      return;
    }
    line += (line.empty() ? "" : "   ") + text;
  }
  if (display_width(line) > width()) {
    for (const auto& [l, v] : vectors) weight(l, *v);
    return;
  }
  out_ << line << "\n";
}

void Page::heatmap(const HeatmapView& view) {
  flush_formula();
  if (!options_.views || !views_shown() || view.heads.empty()) return;
  std::vector<HeatmapBlock> blocks;
  for (std::size_t h = 0; h < view.heads.size(); ++h)
    blocks.push_back({view.titles.at(h), view.heads[h], h < view.masked.size() ? view.masked[h] : Tensor()});
  const std::size_t room = width() > 4 ? width() - 4 : 1;
  const std::string text =
      render_heatmaps(blocks, view.row_labels, view.column_labels, heatmap_options(options_), room);
  if (text.empty()) {
    write_wrapped(
        "  ", fmt::format("(heatmap left out: {} keys do not fit in {} columns)", view.column_labels.size(), width()));
    return;
  }
  write_wrapped("  ", view.caption);
  // Coloured cells are not wrapped: render_heatmaps fitted them to the line already.
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);)
    if (display_width(l) + 4 <= width())
      out_ << "    " << l << "\n";
    else
      write_wrapped("    ", l);
}

void Page::table(const std::string& caption, const Tensor& matrix, const std::vector<std::string>& row_labels,
                 const std::vector<std::string>& column_labels) {
  if (!options_.views || !full_text()) return;
  LabeledTableOptions table;
  table.precision = options_.array.precision;
  const std::string text = render_labeled_table(matrix, row_labels, column_labels, table);
  std::size_t widest = 0;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) widest = std::max(widest, display_width(l));
  if (widest + 4 > width()) return;  // the tensor above shows the same numbers
  line(caption);
  raw([&] {
    std::string out;
    std::istringstream again(text);
    for (std::string l; std::getline(again, l);) out += "    " + l + "\n";
    return out;
  }());
}

void Page::top_k(const TopKView& view) {
  flush_formula();
  if (!full_text()) return;
  line(view.caption);
  std::size_t label_width = 0;
  for (const auto& label : view.row_labels) label_width = std::max(label_width, display_width(label));
  for (std::size_t r = 0; r < view.rows.size(); ++r) {
    std::string row = pad_right(view.row_labels[r], label_width);
    for (const auto& [token, value] : view.rows[r]) row += fmt::format("  {} {:.{}f}", token, value, view.decimals);
    write_wrapped("    ", row);
  }
}

}  // namespace attn
