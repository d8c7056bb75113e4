#include "present/page.h"

#include <sstream>

#include <fmt/format.h>

#include "attn/error.h"
#include "present/array_format.h"
#include "present/explanations.h"
#include "present/tensor_stats.h"
#include "present/tensor_views.h"
#include "present/terminal.h"

namespace attn {

namespace {

// The backward pass walks the same layers again, in reverse: a layer's gradients are a new
// section of the walkthrough, with their own header.
bool same_layer(const StepId& a, const StepId& b) {
  return a.stack == b.stack && a.layer == b.layer && a.gradient == b.gradient;
}

bool same_block(const StepId& a, const StepId& b) {
  return a.in_layer() == b.in_layer() && same_layer(a, b) && a.block == b.block;
}

// "══ Encoder layer 0 of 6 (post-norm, as the paper: LayerNorm(x + f(x))) ══"
std::string layer_header(const StepId& id, const Model& model) {
  const bool encoder = id.stack == Stack::Encoder;
  const auto layer = static_cast<std::size_t>(id.layer);
  const bool full = encoder ? model.encoder[layer].full : true;
  return fmt::format("══ {}{} layer {} of {}{} ══", id.gradient ? "Backward: " : "",
                     id.gradient ? (encoder ? "encoder" : "decoder") : (encoder ? "Encoder" : "Decoder"), layer,
                     encoder ? model.encoder.size() : model.decoder.size(),
                     !full                     ? " (an attention block alone)"
                     : model.config.norm_first ? " (pre-norm: x + f(LayerNorm(x)))"
                                               : " (post-norm, as the paper: LayerNorm(x + f(x)))");
}

}  // namespace

std::string Page::paint(const std::string& text, const char* code) const {
  return options_.color ? std::string("\x1b[") + code + "m" + text + kResetSequence : text;
}

// In list mode (attn steps) formulas and shapes are indented under the step's entry.
std::string Page::margin() const { return options_.list_only ? std::string(24, ' ') : "  "; }

void Page::explanation(const std::string& why) {
  if (const char* text = explanation_for(why)) {
    std::istringstream lines(text);
    for (std::string l; std::getline(lines, l);) out_ << paint("  │ " + l, "2") << "\n";
  }
}

bool Page::begin_step(const char* shown_kind, const std::string& title, const std::string& why) {
  ++step_;
  shown_ = options_.filter.selects(step_, shown_kind, layer_ ? &*layer_ : nullptr);
  if (!shown_) return false;
  if (printed_steps_ > 0 && options_.before_step && !options_.before_step(step_)) throw StopWalkthrough{};
  ++printed_steps_;
  const char* gap = options_.list_only ? "" : "\n";
  if (!pending_layer_header_.empty()) out_ << "\n" << paint(pending_layer_header_, "1;35") << "\n";
  if (!pending_block_header_.empty()) out_ << gap << paint(pending_block_header_, "35") << "\n";
  if (!pending_block_why_.empty() && options_.explanations && !options_.list_only) explanation(pending_block_why_);
  pending_layer_header_.clear();
  pending_block_header_.clear();
  pending_block_why_.clear();
  if (options_.list_only) {
    // attn steps: one compact entry per step.
    out_ << fmt::format("{:>4}  {:<17} {}\n", step_, shown_kind, title);
    return true;
  }
  const std::string head = fmt::format("── Step {}: {} ", step_, title);
  std::string rule;
  for (std::size_t n = display_width(head); n < 72; ++n) rule += "─";
  out_ << "\n" << paint(head + rule, "1;36") << "\n";
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
  const std::string heads =
      fmt::format("H={} head{} of d={} (d_model N={})", c.num_heads, c.num_heads == 1 ? "" : "s", c.d_head, c.d_model);
  pending_block_header_.clear();
  pending_block_why_.clear();
  if (!id.in_layer()) return;
  const char* backward = id.gradient ? ", backward" : "";
  if (id.block == Block::SelfAttention) {
    pending_block_header_ = fmt::format("── Multi-head self-attention{}, {} ──", backward, heads);
  } else if (id.block == Block::MaskedSelfAttention) {
    pending_block_header_ =
        fmt::format("── Masked multi-head self-attention over the target{}, {} ──", backward, heads);
    pending_block_why_ = "decoder_self_attention";
  } else if (id.block == Block::CrossAttention) {
    pending_block_header_ =
        fmt::format("── Cross-attention: queries from the decoder, keys and values from the encoder's output{}, {} ──",
                    backward, heads);
    pending_block_why_ = "cross_attention";
  }
}

void Page::leave_layer() {
  layer_.reset();
  block_.reset();
  pending_layer_header_.clear();
  pending_block_header_.clear();
}

void Page::formula(const std::string& text) {
  if (shown_) out_ << margin() << paint(text, "36") << "\n";
}

void Page::shapes(const std::string& text) {
  if (shown_) out_ << margin() << text << "\n";
}

void Page::line(const std::string& text) {
  if (full_text()) out_ << "  " << text << "\n";
}

void Page::note(const std::string& text) {
  // Notes quote the user's words (an unknown token): shown escaped, never acted on.
  if (full_text()) out_ << "  " << paint("note: " + printable(text), "33") << "\n";
}

void Page::indented(const std::string& text) {
  if (!full_text()) return;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) out_ << "    " << l << "\n";
}

void Page::worked(const std::string& text, const char* heading) {
  if (!options_.worked || !full_text()) return;
  out_ << "  " << paint(heading, "32") << "\n";
  indented(text);
}

void Page::explain(const std::string& why) {
  if (full_text() && options_.explanations) explanation(why);
}

void Page::raw(const std::string& text) {
  if (full_text()) out_ << text;
}

void Page::tensor(const std::string& label, const Tensor& full, bool integers, bool stats) {
  if (!full_text()) return;
  const Tensor t = selected_slice(full, options_.filter);
  const bool sliced = t.rank() != full.rank();
  if (options_.stats && stats && !integers)
    out_ << "  " << paint(format_tensor_stats(t, label.empty() ? "tensor" : label), "2") << "\n";
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

void Page::weight(const std::string& label, const Tensor& w) {
  if (options_.show_weights && !w.data.empty()) tensor(label, w);
}

}  // namespace attn
