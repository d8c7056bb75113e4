#include "attn/walkthrough.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "attn/error.h"
#include "core/top_k.h"
#include "model/json_reader.h"
#include "present/array_format.h"
#include "present/explanations.h"
#include "present/heatmap.h"
#include "present/labeled_table.h"
#include "present/tensor_stats.h"
#include "present/terminal.h"
#include "present/worked_arithmetic.h"

namespace attn {

namespace {

// Every kind of step the walkthrough prints, in order: the names --steps accepts.
const std::vector<StepKind> kStepKinds = {
    {"tokens", "text split into tokens, each looked up to its id"},
    {"padding_mask", "which positions of a batch are <PAD>"},
    {"embedding", "embedding lookup E[ids]"},
    {"scale_embedding", "embeddings times sqrt(d_model)"},
    {"positions", "the positional encoding added to the embeddings"},
    {"input", "the encoder's (or decoder's) input"},
    {"mask", "causal and padding masks, boolean and additive"},
    {"q", "query projection Q = X W_q"},
    {"k", "key projection K = X W_k"},
    {"v", "value projection V = X W_v"},
    {"split_heads", "(B,S,H*d) -> (B,S,H,d) -> (B,H,S,d)"},
    {"transpose_k", "K transposed to (B,H,d,S)"},
    {"scores", "raw scores Q K^T"},
    {"scale", "scores / sqrt(d)"},
    {"masked_scores", "scores + mask"},
    {"softmax", "attention weights, rows summing to 1"},
    {"context", "weights V"},
    {"merge_heads", "(B,H,S,d) -> (B,S,H,d) -> (B,S,H*d)"},
    {"output_projection", "concat W_o"},
    {"residual", "x + sublayer(x)"},
    {"norm", "layer normalization"},
    {"ffn", "the position-wise feed-forward network"},
    {"layer_output", "a layer's result"},
    {"logits", "scores for every vocabulary token"},
    {"probabilities", "softmax over the vocabulary, top 5, greedy pick"},
};

// The trace's own step names (docs/trace-names.md) accepted by --steps as well.
const char* kind_of_trace_step(const std::string& name) {
  static const std::pair<const char*, const char*> aliases[] = {
      {"ids", "tokens"},           {"lookup", "embedding"},
      {"positional", "positions"}, {"q_heads", "split_heads"},
      {"k_heads", "split_heads"},  {"v_heads", "split_heads"},
      {"k_t", "transpose_k"},      {"scaled_scores", "scale"},
      {"weights", "softmax"},      {"concat", "merge_heads"},
      {"hidden", "ffn"},           {"add_norm", "norm"},
      {"output.logits", "logits"}, {"output.probabilities", "probabilities"}};
  for (const auto& [alias, kind] : aliases)
    if (name == alias) return kind;
  return nullptr;
}

// Explanations (explanations.h) are keyed by what they explain; a few steps share one.
std::string explanation_kind(const std::string& kind, const std::string& block) {
  if (kind == "tokens") return "tokenize";
  if (kind == "positions") return "positional_encoding";
  if (kind == "q" || kind == "k" || kind == "v") return "projection_" + kind;
  if (kind == "scores") return "scores";
  if (kind == "mask") return block;  // "causal_mask" or "padding_mask", passed by the caller
  if (kind == "residual" || kind == "norm") return "add_norm";
  if (kind == "ffn") return "feed_forward";
  if (kind == "probabilities") return "output_softmax";
  return kind;
}

// A layer's attention tensors are "<block>.<step>"; the block prefix is everything up to
// the last dot.
struct NameParts {
  std::string block;  // "encoder.0.attention" or "" for top-level tensors
  std::string step;   // "scores"
};

NameParts split_name(const std::string& name) {
  const auto dot = name.rfind('.');
  if (dot == std::string::npos) return {"", name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

// A number in running text: NumPy's digits without its trailing point ("2", not "2.").
std::string plain_number(double value, int precision = 4) {
  std::string s = format_number(value, precision);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string equation(const std::vector<Operand>& operands, const char* op, const Tensor& result) {
  std::string lhs;
  for (std::size_t i = 0; i < operands.size(); ++i)
    lhs += (i ? std::string(" ") + op + " " : "") + shape_with_axes(operands[i].shape, operands[i].axes);
  return lhs + " -> " + shape_with_axes(result);
}

// "(B=2,S=6,H=2,d=2)": the reshape view of a projection, for the split-heads step.
Tensor view_split(const Tensor& projection, std::size_t num_heads) {
  const bool batched = projection.rank() == 3;
  const std::size_t S = projection.shape[batched ? 1 : 0];
  const std::size_t Hd = projection.shape.back();
  Shape shape = {S, num_heads, Hd / num_heads};
  AxisNames axes = {projection.axes[batched ? 1 : 0], "H", "d"};
  if (batched) {
    shape.insert(shape.begin(), projection.shape[0]);
    axes.insert(axes.begin(), projection.axes[0]);
  }
  return reshaped(projection, shape, axes);
}

std::size_t axis_of(const Tensor& t, const std::string& name) {
  for (std::size_t i = 0; i < t.rank(); ++i)
    if (t.axes[i] == name) return i;
  return t.rank();
}

// "encoder.3" for "encoder.3.attention.q" and for the block "encoder.3"; "" for names
// outside the numbered layers ("encoder.mask", "input").
std::string layer_of(const std::string& name) {
  for (const char* stack : {"encoder.", "decoder."}) {
    const std::size_t n = std::strlen(stack);
    if (name.compare(0, n, stack) != 0) continue;
    std::size_t end = n;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    if (end > n && (end == name.size() || name[end] == '.')) return name.substr(0, end);
  }
  return "";
}

bool ends_with(const std::string& text, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return text.size() >= n && text.compare(text.size() - n, n, suffix) == 0;
}

// A --batch or --head index that the axis (B or H) does not have.
[[noreturn]] void slice_index_error(const char* option, const std::string& axis, std::size_t size, std::size_t index) {
  throw InputError(option, "", fmt::format("expected an index below {}={}, found {}", axis, size, index));
}

std::vector<double> row_of(const Tensor& t, std::size_t row) {
  const std::size_t n = t.shape.back();
  return std::vector<double>(t.data.begin() + static_cast<std::ptrdiff_t>(row * n),
                             t.data.begin() + static_cast<std::ptrdiff_t>((row + 1) * n));
}

// Thrown to stop the walkthrough when the learner quits a paused session.
struct StopWalkthrough {};

class Printer {
 public:
  Printer(std::ostream& out, const Trace& trace, const Model& model, const WalkthroughOptions& options)
      : out_(out), trace_(trace), model_(model), options_(options) {}

  void run() {
    for (const auto& entry : trace_.entries()) print(entry);
  }

  // One entry, in trace order. After the learner quits (--pause, q) nothing more prints.
  void print(const TraceEntry& entry) {
    if (stopped_) return;
    try {
      print_entry(entry);
    } catch (const StopWalkthrough&) {
      stopped_ = true;
      out_ << "\n(stopped at step " << step_ << ")\n";
    }
  }

 private:
  // --- output primitives: everything goes through these, so the filters apply -----------

  std::string paint(const std::string& text, const char* code) const {
    return options_.color ? std::string("\x1b[") + code + "m" + text + kResetSequence : text;
  }

  // Starts step number step_+1 of `kind`; returns whether it is shown.
  bool begin_step(const std::string& kind, const std::string& text, const std::string& why_kind = "") {
    ++step_;
    shown_ = options_.filter.selects(step_, kind, current_layer_);
    if (!shown_) return false;
    if (printed_steps_ > 0 && options_.before_step && !options_.before_step(step_)) throw StopWalkthrough{};
    ++printed_steps_;
    const char* gap = options_.list_only ? "" : "\n";
    if (!pending_layer_header_.empty()) out_ << "\n" << paint(pending_layer_header_, "1;35") << "\n";
    if (!pending_block_header_.empty()) out_ << gap << paint(pending_block_header_, "35") << "\n";
    if (!pending_block_why_.empty() && options_.explanations && !options_.list_only)
      if (const char* why = explanation_for(pending_block_why_)) {
        std::istringstream lines(why);
        for (std::string l; std::getline(lines, l);) out_ << paint("  │ " + l, "2") << "\n";
      }
    pending_layer_header_.clear();
    pending_block_header_.clear();
    pending_block_why_.clear();
    if (options_.list_only) {
      // attn steps: one compact entry per step.
      out_ << fmt::format("{:>4}  {:<17} {}\n", step_, kind, text);
      return true;
    }
    const std::string head = fmt::format("── Step {}: {} ", step_, text);
    std::string rule;
    for (std::size_t n = display_width(head); n < 72; ++n) rule += "─";
    out_ << "\n" << paint(head + rule, "1;36") << "\n";
    if (options_.explanations && !options_.list_only) {
      const std::string why = why_kind.empty() ? explanation_kind(kind, why_kind) : why_kind;
      if (const char* text_of_why = explanation_for(why)) {
        std::istringstream lines(text_of_why);
        for (std::string l; std::getline(lines, l);) out_ << paint("  │ " + l, "2") << "\n";
      }
    }
    return true;
  }

  // In list mode (attn steps) formulas and shapes are indented under the step's entry.
  std::string margin() const { return options_.list_only ? std::string(24, ' ') : "  "; }
  void formula(const std::string& text) {
    if (shown_) out_ << margin() << paint(text, "36") << "\n";
  }
  void shapes(const std::string& text) {
    if (shown_) out_ << margin() << text << "\n";
  }
  void line(const std::string& text) {
    if (shown_ && !options_.list_only) out_ << "  " << text << "\n";
  }
  void note(const std::string& text) {
    if (shown_ && !options_.list_only) out_ << "  " << paint("note: " + text, "33") << "\n";
  }
  // Multi-line text (worked arithmetic, tables, heatmaps), indented.
  void indented(const std::string& text) {
    if (!shown_ || options_.list_only) return;
    std::istringstream lines(text);
    for (std::string l; std::getline(lines, l);) out_ << "    " << l << "\n";
  }
  void worked(const std::string& text) {
    if (!options_.worked || !shown_ || options_.list_only) return;
    out_ << "  " << paint("worked, one element:", "32") << "\n";
    indented(text);
  }

  // The tensor as the learner asked for it: --batch and --head pick one slice.
  Tensor selected(const Tensor& t) const {
    Tensor s = t;
    if (options_.filter.batch) s = pick(s, "B", *options_.filter.batch, "--batch");
    if (options_.filter.head) s = pick(s, "H", *options_.filter.head, "--head");
    return s;
  }
  static Tensor pick(const Tensor& t, const std::string& axis, std::size_t index, const char* option) {
    const std::size_t a = axis_of(t, axis);
    if (a == t.rank()) return t;
    if (index >= t.shape[a]) slice_index_error(option, axis, t.shape[a], index);
    return take_index(t, a, index);
  }

  void tensor(const std::string& label, const Tensor& full, bool integers = false, bool stats = true) {
    if (!shown_ || options_.list_only) return;
    const Tensor t = selected(full);
    const bool sliced = t.rank() != full.rank();
    if (options_.stats && stats && !integers)
      out_ << "  " << paint(format_tensor_stats(t, label.empty() ? "tensor" : label), "2") << "\n";
    ArrayFormatOptions array = options_.array;
    array.integers = integers;
    std::string prefix = label.empty() ? "" : label;
    if (sliced) {
      std::string index;
      if (options_.filter.batch && axis_of(full, "B") < full.rank())
        index += fmt::format("b={}", *options_.filter.batch);
      if (options_.filter.head && axis_of(full, "H") < full.rank())
        index += fmt::format("{}h={}", index.empty() ? "" : ",", *options_.filter.head);
      prefix += "[" + index + "]";
    }
    if (!prefix.empty()) prefix += " = ";
    out_ << prefix << format_array(t, array, display_width(prefix)) << "\n";
  }

  void print_weight(const std::string& label, const Tensor& w) {
    if (options_.show_weights && !w.data.empty()) tensor(label, w);
  }

  // --- layers and blocks -----------------------------------------------------------------

  const AttentionWeights* attention_for(const std::string& block) const {
    unsigned layer = 0;
    char kind[32] = {0};
    if (std::sscanf(block.c_str(), "encoder.%u.attentio%1[n]", &layer, kind) == 2 && layer < model_.encoder.size())
      return &model_.encoder[layer].attention;
    if (std::sscanf(block.c_str(), "decoder.%u.%31s", &layer, kind) == 2 && layer < model_.decoder.size()) {
      if (std::string(kind) == "self_attention") return &model_.decoder[layer].self_attention;
      if (std::string(kind) == "cross_attention") return &model_.decoder[layer].cross_attention;
    }
    return nullptr;
  }

  // Headers when the walkthrough enters a new layer or a new attention block; printed with
  // the next step that is shown.
  void block_header(const std::string& block) {
    const std::string layer_name = layer_of(block);
    if (!layer_name.empty()) {
      if (layer_name != current_layer_) {
        current_layer_ = layer_name;
        const bool encoder = layer_name.rfind("encoder.", 0) == 0;
        const std::size_t layer = std::stoul(layer_name.substr(layer_name.find('.') + 1));
        const bool full = encoder ? model_.encoder[layer].full : true;
        pending_layer_header_ =
            fmt::format("══ {} layer {} of {}{} ══", encoder ? "Encoder" : "Decoder", layer,
                        encoder ? model_.encoder.size() : model_.decoder.size(),
                        !full                      ? " (an attention block alone)"
                        : model_.config.norm_first ? " (pre-norm: x + f(LayerNorm(x)))"
                                                   : " (post-norm, as the paper: LayerNorm(x + f(x)))");
        pending_block_header_.clear();
      }
    } else {
      leave_layer();
    }
    if (block == current_block_) return;
    current_block_ = block;
    const auto& c = model_.config;
    const std::string heads = fmt::format("H={} head{} of d={} (d_model N={})", c.num_heads,
                                          c.num_heads == 1 ? "" : "s", c.d_head, c.d_model);
    pending_block_header_.clear();
    pending_block_why_.clear();
    if (block.size() > 10 && block.compare(block.size() - 10, 10, ".attention") == 0)
      pending_block_header_ = fmt::format("── Multi-head self-attention, {} ──", heads);
    else if (block.find(".self_attention") != std::string::npos) {
      pending_block_header_ = fmt::format("── Masked multi-head self-attention over the target, {} ──", heads);
      pending_block_why_ = "decoder_self_attention";
    } else if (block.find(".cross_attention") != std::string::npos) {
      pending_block_header_ = fmt::format(
          "── Cross-attention: queries from the decoder, keys and values from the encoder's output, {} ──", heads);
      pending_block_why_ = "cross_attention";
    }
  }

  // Steps outside any layer (tokens, masks, the output head): headers of a layer whose
  // steps were all filtered out must not stick to them.
  void leave_layer() {
    current_layer_.clear();
    current_block_.clear();
    pending_layer_header_.clear();
    pending_block_header_.clear();
  }

  // --- labels ----------------------------------------------------------------------------

  // Token strings of a sequence for batch item b, or positions "0", "1", ...
  std::vector<std::string> labels(const std::string& which, std::size_t b, std::size_t n) const {
    const auto* tokens = trace_.tokens(which);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < n; ++i)
      out.push_back(tokens && b < tokens->size() && i < (*tokens)[b].size() ? (*tokens)[b][i] : std::to_string(i));
    return out;
  }
  // Query and key sequences of an attention block.
  std::string query_sequence(const std::string& block) const {
    return block.rfind("decoder", 0) == 0 ? "target" : "source";
  }
  std::string key_sequence(const std::string& block) const {
    return block.find("self_attention") != std::string::npos ? "target" : "source";
  }

  // --- the steps -------------------------------------------------------------------------

  void print_entry(const TraceEntry& e) {
    const auto [block, step] = split_name(e.name);
    if (!print_sequence_step(e) && !print_mask_step(e) && !print_output_step(e)) {
      block_header(block);
      if (!print_layer_step(e, block, step)) print_attention_step(e, block, step);
    }
    for (const auto& w : trace_.warnings())
      if (w.name == e.name) note(w.message);
  }

  // Tokens, ids, embedding lookup, positions, the input: the start of either sequence.
  bool print_sequence_step(const TraceEntry& e) {
    const Tensor& t = e.tensor;
    const bool target = e.name.rfind("target_", 0) == 0;
    const std::string which = target ? "target" : "source";
    const std::string base = target ? e.name.substr(7) : e.name;
    if (base == "tokens.ids") {
      leave_layer();
      begin_step("tokens", target ? "Target tokens and ids (the decoder's input)" : "Tokens and ids");
      formula("split on whitespace, punctuation on its own; each token's id is its row in the vocabulary");
      if (const auto* tokens = trace_.tokens(which)) {
        for (std::size_t b = 0; b < tokens->size(); ++b) {
          std::string row = trace_.drops_batch_axis() ? "" : fmt::format("[{}] ", b);
          for (std::size_t s = 0; s < (*tokens)[b].size(); ++s)
            row += fmt::format("{}\"{}\"→{}", s ? "  " : "", (*tokens)[b][s],
                               static_cast<long long>(t.data[b * (*tokens)[b].size() + s]));
          line(row);
        }
      }
      shapes(shape_with_axes(t));
      tensor("ids", t, true);
      return true;
    }
    if (base == "tokens.padding_mask") {
      begin_step("padding_mask", target ? "Target padding mask" : "Padding mask", "padding_mask");
      formula("1 where a sentence was padded with <PAD> to the batch's longest; those keys get -inf below");
      shapes(shape_with_axes(t));
      tensor("padding", t, true);
      return true;
    }
    if (base == "embedding.lookup") {
      begin_step("embedding", target ? "Target embedding lookup" : "Embedding lookup");
      formula(
          "x = E[ids]: row ids[s] of the embedding table E, the same as one_hot(ids) @ E without the multiplications");
      if (e.operands.size() == 2)
        shapes(fmt::format("{} ids into E {} -> {}", shape_with_axes(e.operands[0].shape, e.operands[0].axes),
                           shape_with_axes(e.operands[1].shape, e.operands[1].axes), shape_with_axes(t)));
      if (const auto* tokens = trace_.tokens(which)) {
        const std::size_t N = model_.config.d_model;
        const std::size_t shown = std::min<std::size_t>((*tokens)[0].size(), 8);
        for (std::size_t s = 0; s < shown; ++s) {
          const auto id = model_.vocab.find((*tokens)[0][s]);
          Tensor row({N}, {"N"});
          std::copy(t.data.begin() + static_cast<std::ptrdiff_t>(s * N),
                    t.data.begin() + static_cast<std::ptrdiff_t>((s + 1) * N), row.data.begin());
          line(fmt::format("E[{}] (\"{}\") = {}", id ? std::to_string(*id) : "<UNK>", (*tokens)[0][s],
                           format_array(row, options_.array)));
        }
      }
      tensor("x", t);
      return true;
    }
    if (base == "embedding.scaled") {
      begin_step("scale_embedding", "Scale the embeddings", "embedding");
      formula(fmt::format("x = x · √d_model = x · √{} = x · {}", model_.config.d_model,
                          plain_number(std::sqrt(double(model_.config.d_model)))));
      shapes(shape_with_axes(t) + " · scalar -> " + shape_with_axes(t));
      tensor("x", t);
      return true;
    }
    if (base == "embedding.positional") {
      if (model_.config.positional_encoding == PositionalEncoding::Learned) {
        begin_step("positions", "Learned positions");
        formula("PE = P[0:S]: the first S rows of the learned position table");
      } else {
        begin_step("positions", "Sinusoidal positional encoding");
        formula("PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))");
      }
      shapes(shape_with_axes(t) + ", the same rows for every sentence in the batch");
      tensor("PE", t);
      if (model_.config.positional_encoding == PositionalEncoding::Sinusoidal && t.rank() == 2) {
        // Default: PE(1, 2), the element seed 004 works out; --cell i,j picks (pos, dim).
        const std::size_t pos = options_.cell_given ? options_.cell[2] : std::min<std::size_t>(1, t.shape[0] - 1);
        const std::size_t dim = options_.cell_given ? options_.cell[3] : std::min<std::size_t>(2, t.shape[1] - 1);
        if (pos < t.shape[0] && dim < t.shape[1])
          worked(worked_positional_encoding(pos, dim, model_.config.d_model, worked_options()));
      }
      return true;
    }
    if (e.name == "input" || e.name == "target_input") {
      leave_layer();
      const bool from_tokens = trace_.find(target ? "target_embedding.lookup" : "embedding.lookup") != nullptr;
      begin_step("input", target ? "Decoder input" : "Input X");
      if (from_tokens && model_.config.positional_encoding != PositionalEncoding::None)
        formula(target ? "Y = E[target ids] + PE: the decoder's input"
                       : "X = E[ids] + PE: each token's embedding plus its position");
      else if (from_tokens)
        formula("X = E[ids] (no positional encoding)");
      else
        formula("X: one row of d_model numbers per position, as given");
      shapes(shape_with_axes(t));
      tensor(target ? "Y" : "X", t);
      return true;
    }
    return false;
  }

  // The additive masks: shown in boolean form (which keys are hidden) and as added to the scores.
  bool print_mask_step(const TraceEntry& e) {
    const bool encoder = e.name == "encoder.mask";
    const bool self = e.name == "decoder.self_mask";
    const bool cross = e.name == "decoder.cross_mask";
    if (!encoder && !self && !cross) return false;
    const Tensor& t = e.tensor;
    leave_layer();
    const bool causal = self || (encoder && model_.config.causal);
    const char* why = causal ? "causal_mask" : "padding_mask";
    if (cross)
      begin_step("mask", "Cross-attention mask (source padding)", why);
    else if (self)
      begin_step("mask", "Decoder self-attention mask (causal)", why);
    else
      begin_step("mask", model_.config.causal ? "Causal mask" : "Padding mask for self-attention", why);
    if (causal) formula("position i may attend to positions j <= i: nothing from the future");
    if (t.rank() == 3 || cross) formula("padded keys (<PAD>) are hidden from every query");
    Tensor hidden = t;
    for (double& v : hidden.data) v = std::isinf(v) ? 1.0 : 0.0;
    shapes(shape_with_axes(t));
    line("1 = hidden:");
    tensor("hidden", hidden, true);
    line("added to the scores (0 keeps a score, -inf removes it):");
    tensor("mask", t);
    return true;
  }

  WorkedOptions worked_options() const {
    WorkedOptions w;
    w.precision = options_.array.precision;
    return w;
  }

  // The rows of a (B?,S,N) tensor for batch item b as an (S,N) matrix.
  Tensor batch_item(const Tensor& t, std::size_t b) const {
    return axis_of(t, "B") < t.rank() ? take_index(t, axis_of(t, "B"), b) : t;
  }
  // The (S,d) matrix of head h of batch item b of a (B?,H,S,d) tensor.
  Tensor head_matrix(const Tensor& t, std::size_t b, std::size_t h) const {
    const Tensor item = batch_item(t, b);
    return take_index(item, axis_of(item, "H"), h);
  }
  // "[b][h]" or "[h]": the leading indices of an element of a (B?,H,S,T) tensor.
  std::string head_index(const Tensor& t, std::size_t b, std::size_t h) const {
    return batch_count(t) > 1 || axis_of(t, "B") < t.rank() ? fmt::format("[{}][{}]", b, h) : fmt::format("[{}]", h);
  }
  std::size_t cell_batch() const { return options_.filter.batch.value_or(options_.cell_given ? options_.cell[0] : 0); }
  std::size_t cell_head() const { return options_.filter.head.value_or(options_.cell_given ? options_.cell[1] : 0); }

  const NormWeights* norm_for(const std::string& name) const {
    if (name == "encoder.norm") return &model_.encoder_norm;
    if (name == "decoder.norm") return &model_.decoder_norm;
    unsigned layer = 0, which = 0;
    char stack[16] = {0};
    if (std::sscanf(name.c_str(), "%15[a-z].%u.add_norm%u", stack, &layer, &which) == 3 ||
        std::sscanf(name.c_str(), "%15[a-z].%u.norm%u", stack, &layer, &which) == 3) {
      if (std::string(stack) == "encoder" && layer < model_.encoder.size())
        return which == 1 ? &model_.encoder[layer].norm1 : &model_.encoder[layer].norm2;
      if (std::string(stack) == "decoder" && layer < model_.decoder.size())
        return which == 1   ? &model_.decoder[layer].norm1
               : which == 2 ? &model_.decoder[layer].norm2
                            : &model_.decoder[layer].norm3;
    }
    return nullptr;
  }

  // Residuals, layer norms, feed-forward, a layer's output.
  bool print_layer_step(const TraceEntry& e, const std::string& block, const std::string& step) {
    const Tensor& t = e.tensor;
    if (step.rfind("residual", 0) == 0) {
      const bool decoder = block.rfind("decoder", 0) == 0;
      const char* which = step == "residual1"   ? (decoder ? "self-attention" : "attention")
                          : step == "residual2" ? (decoder ? "cross-attention" : "feed-forward")
                                                : "feed-forward";
      begin_step("residual", fmt::format("Add (residual connection around the {})", which));
      formula("r = x + Sublayer(x): the sub-layer's output added back to its input");
      shapes(equation(e.operands, "+", t));
      tensor("r", t);
      return true;
    }
    const bool add_norm = step.rfind("add_norm", 0) == 0;
    if (add_norm || step == "norm1" || step == "norm2" || step == "norm3" || e.name == "encoder.norm" ||
        e.name == "decoder.norm") {
      if (e.name == "encoder.norm" || e.name == "decoder.norm") current_layer_.clear();
      begin_step("norm", add_norm                   ? "Norm (LayerNorm of the residual sum)"
                         : e.name == "encoder.norm" ? "Final LayerNorm of the encoder stack"
                         : e.name == "decoder.norm" ? "Final LayerNorm of the decoder stack"
                                                    : "LayerNorm before the sub-layer (pre-norm)");
      formula(
          fmt::format("LN(x) = (x - mean) / sqrt(var + eps) · gamma + beta, per position over its d_model values "
                      "(var divides by N; eps = {})",
                      plain_number(model_.config.layer_norm_eps, 10)));
      shapes(shape_with_axes(t) + " -> " + shape_with_axes(t));
      tensor("LN", t);
      const NormWeights* norm = norm_for(e.name);
      const TraceEntry* input = e.operands.empty() ? nullptr : trace_.find(e.operands[0].name);
      if (norm && input) {
        const Tensor x = batch_item(input->tensor, std::min(cell_batch(), batch_count(input->tensor) - 1));
        const std::size_t row = options_.cell_given ? options_.cell[2] : 0;
        if (row < x.shape[0])
          worked(worked_layer_norm_row(row_of(x, row), to_vector(norm->gamma.data), to_vector(norm->beta.data),
                                       model_.config.layer_norm_eps, fmt::format("{}[{}]", e.operands[0].name, row),
                                       worked_options()));
      }
      return true;
    }
    if (block.size() > 4 && block.compare(block.size() - 4, 4, ".ffn") == 0) {
      const bool relu = model_.config.activation == Activation::ReLU;
      if (step == "hidden") {
        begin_step("ffn", "Feed-forward, first layer");
        formula(std::string("hidden = ") + (relu ? "ReLU" : "GELU") + "(x · W_1 + b_1)" +
                (relu ? "   (ReLU(v) = max(0, v))" : "   (GELU(v) = v · Φ(v))"));
        shapes(equation(e.operands, "@", t));
        tensor("hidden", t);
      } else {
        begin_step("ffn", "Feed-forward, second layer");
        formula("ffn = hidden · W_2 + b_2: back to d_model columns, each position on its own");
        shapes(equation(e.operands, "@", t));
        tensor("ffn", t);
      }
      return true;
    }
    if (step == "output" && block.find('.') != std::string::npos && block.find("attention") == std::string::npos) {
      begin_step("layer_output", fmt::format("{} layer output", block.rfind("encoder", 0) == 0 ? "Encoder" : "Decoder"),
                 "encoder_stack");
      formula(fmt::format("the last tensor above, {}: the next layer's input", shape_with_axes(t)));
      return true;
    }
    return false;
  }

  static std::size_t batch_count(const Tensor& t) {
    const std::size_t a = axis_of(t, "B");
    return a < t.rank() ? t.shape[a] : 1;
  }

  // Logits and the softmax over the vocabulary, with the most likely next tokens.
  bool print_output_step(const TraceEntry& e) {
    const Tensor& t = e.tensor;
    if (e.name == "output.logits") {
      leave_layer();
      begin_step("logits", "Output logits", "output_softmax");
      formula(model_.output.tied ? "logits = x · Eᵀ: one score per vocabulary token (the embedding table, transposed)"
                                 : "logits = x · W_out + b_out: one score per vocabulary token");
      shapes(equation(e.operands, "@", t));
      tensor("logits", t);
      return true;
    }
    if (e.name != "output.probabilities") return false;
    begin_step("probabilities", "Softmax over the vocabulary");
    formula("p = softmax(logits): the probability of each token being the next one; each row sums to 1");
    shapes(shape_with_axes(t));
    tensor("p", t);
    const std::size_t V = t.shape.back();
    const std::size_t rows = t.size() / V;
    const std::size_t len = t.rank() >= 2 ? t.shape[t.rank() - 2] : 1;
    const auto* tokens = trace_.tokens(trace_.tokens("target") ? "target" : "source");
    std::string greedy;
    for (std::size_t r = 0; r < rows; ++r) {
      const std::size_t b = r / len, pos = r % len;
      if (options_.filter.batch && b != *options_.filter.batch) continue;
      const auto top = top_tokens(t.data.data() + r * V, V, 5);
      const std::string after = tokens && b < tokens->size() && pos < (*tokens)[b].size() ? (*tokens)[b][pos] : "";
      std::string row;
      for (const auto& tp : top)
        row += fmt::format("{}\"{}\" {}", row.empty() ? "" : ",  ", model_.vocab.token(tp.id),
                           plain_number(tp.probability, 4));
      line(fmt::format("{}after \"{}\" (position {}): top 5: {}", rows > len ? fmt::format("[{}] ", b) : "", after, pos,
                       row));
      greedy += (greedy.empty() ? "" : " ") + model_.vocab.token(top[0].id);
    }
    line("greedy pick (the most probable token at each position): " + greedy);
    return true;
  }

  // One (S,T) matrix per head of batch item b, side by side as heatmaps with token labels.
  void heatmaps(const Tensor& weights, const std::string& block) {
    if (!options_.views || !shown_ || options_.list_only) return;
    const std::size_t S = weights.shape[weights.rank() - 2], T = weights.shape.back();
    if (S > 16 || T > 16) {
      line(fmt::format("(heatmap left out: {}x{} is larger than 16x16)", S, T));
      return;
    }
    HeatmapOptions h;
    h.style = options_.heatmap_style.value_or(options_.color ? HeatmapStyle::Color : HeatmapStyle::Shade);
    h.depth = options_.color_depth;
    const std::size_t B = batch_count(weights), H = model_.config.num_heads;
    for (std::size_t b = 0; b < B; ++b) {
      if (options_.filter.batch && b != *options_.filter.batch) continue;
      std::vector<Tensor> heads;
      std::vector<std::string> titles;
      for (std::size_t head = 0; head < H; ++head) {
        if (options_.filter.head && head != *options_.filter.head) continue;
        heads.push_back(head_matrix(weights, b, head));
        titles.push_back(fmt::format("head {}", head));
      }
      line(fmt::format("heatmap{}: rows are queries, columns keys; the arrow marks each row's strongest key",
                       B > 1 ? fmt::format(" of batch item {}", b) : std::string()));
      indented(render_heatmaps_side_by_side(heads, titles, labels(query_sequence(block), b, S),
                                            labels(key_sequence(block), b, T), h));
    }
  }

  // The scaled scores of one head as a boxed table, Q:"I" x K:"love", as seed 004 draws them.
  void labeled_scores(const Tensor& scaled, const std::string& block) {
    if (!options_.views || !shown_ || options_.list_only) return;
    const std::size_t S = scaled.shape[scaled.rank() - 2], T = scaled.shape.back();
    if (S > 12 || T > 12) return;
    const std::size_t b = std::min(cell_batch(), batch_count(scaled) - 1);
    const std::size_t h = std::min(cell_head(), model_.config.num_heads - 1);
    LabeledTableOptions table;
    table.precision = options_.array.precision;
    line(fmt::format("head {}{}, every query against every key:", h,
                     batch_count(scaled) > 1 ? fmt::format(" of batch item {}", b) : ""));
    indented(render_labeled_table(head_matrix(scaled, b, h), token_labels("Q", labels(query_sequence(block), b, S)),
                                  token_labels("K", labels(key_sequence(block), b, T)), table));
  }

  void print_attention_step(const TraceEntry& e, const std::string& block, const std::string& step) {
    const Tensor& t = e.tensor;
    const AttentionWeights* w = attention_for(block);
    const std::size_t H = model_.config.num_heads, d = model_.config.d_head;
    const std::size_t b = cell_batch(), h = cell_head();
    const std::size_t i = options_.cell_given ? options_.cell[2] : 0, j = options_.cell_given ? options_.cell[3] : 0;
    if (step == "q" || step == "k" || step == "v") {
      const std::string upper = step == "q" ? "Q" : step == "k" ? "K" : "V";
      const std::string what = step == "q" ? "Query" : step == "k" ? "Key" : "Value";
      const Tensor* bias = w ? (step == "q" ? &w->b_q : step == "k" ? &w->b_k : &w->b_v) : nullptr;
      const bool has_bias = bias && !bias->data.empty();
      begin_step(step, fmt::format("{} projection", what), "");
      // The rows multiplied: X (the encoder's input), Y (the decoder's), M (the encoder's
      // output, which cross-attention's keys and values read), or x named by its trace name.
      const bool cross = block.find("cross_attention") != std::string::npos;
      const std::string input_name = e.operands.empty() ? "" : e.operands[0].name;
      const std::string source = cross && step != "q"           ? "M"
                                 : input_name == "input"        ? "X"
                                 : input_name == "target_input" ? "Y"
                                                                : "x";
      formula(fmt::format("{} = {} · W_{}{}{}", upper, source, step, has_bias ? " + b_" + step : "",
                          source == "M"   ? "   (M: the encoder's output, the 'memory')"
                          : source == "x" ? "   (x = " + input_name + ")"
                                          : ""));
      shapes(equation(e.operands, "@", t));
      if (w) {
        const Tensor& W = step == "q" ? w->W_q : step == "k" ? w->W_k : w->W_v;
        if (!w->heads.empty()) print_heads_side_by_side(step, *w);
        print_weight("W_" + step, W);
        if (has_bias) print_weight("b_" + step, *bias);
        const TraceEntry* input = e.operands.empty() ? nullptr : trace_.find(e.operands[0].name);
        if (step == "q" && input) {
          const Tensor x = batch_item(input->tensor, std::min(b, batch_count(input->tensor) - 1));
          if (i < x.shape[0] && j < W.shape[1])
            worked(worked_projection_cell(x, W, has_bias ? *bias : Tensor(), i, j, "Q", source, "W_q", "b_q",
                                          worked_options()));
        }
      }
      tensor(upper, t);
      return;
    }
    if (step == "q_heads" || step == "k_heads" || step == "v_heads") {
      const std::string upper = step == "q_heads" ? "Q" : step == "k_heads" ? "K" : "V";
      const TraceEntry* projection = trace_.find(block + "." + step.substr(0, 1));
      begin_step("split_heads",
                 H == 1 ? fmt::format("Split {} into heads (one head: only the axes move)", upper)
                        : fmt::format("Split {} into {} heads", upper, H),
                 H > 1 && step == "q_heads" ? "multiple_heads" : "split_heads");
      if (projection) {
        const Tensor view = view_split(projection->tensor, H);
        formula(fmt::format("1. reshape: {} -> {}   (head h owns columns h*d .. h*d+{})",
                            shape_with_axes(projection->tensor), shape_with_axes(view), d - 1));
        tensor(upper, view);
        formula(fmt::format("2. transpose{}: {} -> {}   (heads first: one ({},d) matrix per head)",
                            view.rank() == 4 ? "(0, 2, 1, 3)" : "(1, 0, 2)", shape_with_axes(view), shape_with_axes(t),
                            t.axes[t.rank() - 2]));
      }
      tensor(upper, t);
      return;
    }
    if (step == "k_t") {
      begin_step("transpose_k", "Transpose K");
      formula("Kᵀ = K.transpose(-2, -1): swap the last two axes so that Q · Kᵀ sums over d");
      shapes(equation(e.operands, "->", t));
      tensor("K_T", t);
      return;
    }
    if (step == "scores") {
      begin_step("scores", "Raw scores");
      formula("scores = Q · Kᵀ   (scores[i][j] = query i · key j)");
      shapes(equation(e.operands, "@", t));
      tensor("scores", t);
      const TraceEntry* q = trace_.find(block + ".q_heads");
      const TraceEntry* k = trace_.find(block + ".k_heads");
      if (q && k && b < batch_count(t) && h < H) {
        const Tensor qm = head_matrix(q->tensor, b, h), km = head_matrix(k->tensor, b, h);
        if (i < qm.shape[0] && j < km.shape[0])
          worked(worked_score_cell(qm, km, i, j, "scores" + head_index(t, b, h), "Q", "K", worked_options()));
      }
      return;
    }
    if (step == "scaled_scores") {
      begin_step("scale", "Scale");
      formula(fmt::format("scaled = scores / √d = scores / √{} = scores / {}", d, plain_number(std::sqrt(double(d)))));
      shapes(shape_with_axes(t) + " / scalar -> " + shape_with_axes(t));
      tensor("scaled", t);
      const TraceEntry* scores = trace_.find(block + ".scores");
      if (scores && b < batch_count(t) && h < H) {
        const Tensor m = head_matrix(scores->tensor, b, h);
        if (i < m.shape[0] && j < m.shape[1])
          worked(worked_scaling(m.data[i * m.shape[1] + j], d,
                                fmt::format("scores{}[{}][{}]", head_index(t, b, h), i, j),
                                fmt::format("scaled{}[{}][{}]", head_index(t, b, h), i, j), worked_options()));
      }
      labeled_scores(t, block);
      return;
    }
    if (step == "masked_scores") {
      const bool causal = (block.rfind("decoder", 0) == 0 && block.find("self") != std::string::npos) ||
                          (block.rfind("encoder", 0) == 0 && model_.config.causal);
      begin_step("masked_scores", "Mask", causal ? "causal_mask" : "padding_mask");
      formula("masked = scaled + mask   (-inf where a key must not be seen; softmax turns it into 0)");
      shapes(equation(e.operands, "+", t));
      tensor("masked", t);
      return;
    }
    if (step == "weights") {
      const bool masked = trace_.find(block + ".masked_scores") != nullptr;
      begin_step("softmax", "Softmax");
      formula(fmt::format("weights = softmax({}, axis=-1) = exp(x - max) / sum(exp(x - max)), row by row",
                          masked ? "masked" : "scaled"));
      shapes(shape_with_axes(t) + " -> " + shape_with_axes(t));
      tensor("weights", t);
      Tensor sums(Shape(t.shape.begin(), t.shape.end() - 1), AxisNames(t.axes.begin(), t.axes.end() - 1));
      const std::size_t T = t.shape.back();
      for (std::size_t r = 0; r < sums.size(); ++r) {
        double s = 0;
        for (std::size_t c = 0; c < T; ++c) s += t.data[r * T + c];
        sums.data[r] = s;
      }
      line("each row sums to 1:");
      tensor("row sums", sums, false, false);
      const TraceEntry* input = trace_.find(block + (masked ? ".masked_scores" : ".scaled_scores"));
      if (input && b < batch_count(t) && h < H) {
        const Tensor m = head_matrix(input->tensor, b, h);
        if (i < m.shape[0])
          worked(worked_softmax_row(row_of(m, i),
                                    fmt::format("{}{}[{}]", masked ? "masked" : "scaled", head_index(t, b, h), i),
                                    fmt::format("weights{}[{}]", head_index(t, b, h), i), worked_options()));
      }
      heatmaps(t, block);
      return;
    }
    if (step == "context") {
      begin_step("context", "Context");
      formula("context = weights · V   (each row: a weighted sum of value rows)");
      shapes(equation(e.operands, "@", t));
      tensor("context", t);
      const TraceEntry* weights = trace_.find(block + ".weights");
      const TraceEntry* v = trace_.find(block + ".v_heads");
      if (weights && v && b < batch_count(t) && h < H) {
        const Tensor wm = head_matrix(weights->tensor, b, h), vm = head_matrix(v->tensor, b, h);
        if (i < wm.shape[0]) {
          ContextNames names;
          names.result = fmt::format("context{}[{}]", head_index(t, b, h), i);
          for (const auto& key : labels(key_sequence(block), b, vm.shape[0])) names.keys.push_back(key);
          if (!trace_.tokens(key_sequence(block))) names.keys.clear();
          worked(worked_context_row(row_of(wm, i), vm, names, worked_options()));
        }
      }
      return;
    }
    if (step == "concat") {
      begin_step("merge_heads", "Merge heads");
      const TraceEntry* context = trace_.find(block + ".context");
      if (context) {
        const Tensor& c = context->tensor;
        const bool batched = c.rank() == 4;
        const Tensor back =
            transposed(c, batched ? std::vector<std::size_t>{0, 2, 1, 3} : std::vector<std::size_t>{1, 0, 2});
        formula(fmt::format("1. transpose{}: {} -> {}   (positions first again)",
                            batched ? "(0, 2, 1, 3)" : "(1, 0, 2)", shape_with_axes(c), shape_with_axes(back)));
        tensor("context", back);
        formula(fmt::format("2. reshape: {} -> {}   (concat: the heads' vectors side by side)", shape_with_axes(back),
                            shape_with_axes(t)));
      }
      tensor("concat", t);
      if (w && !w->has_output_projection()) {
        begin_step("output_projection", "Output projection (skipped)");
        formula("this block has no W_o: its output is the concatenation " + shape_with_axes(t));
      }
      return;
    }
    if (step == "output") {
      const bool bias = w && !w->b_o.data.empty();
      begin_step("output_projection", "Output projection");
      formula(std::string("output = concat · W_o") + (bias ? " + b_o" : ""));
      shapes(equation(e.operands, "@", t));
      if (w) {
        print_weight("W_o", w->W_o);
        if (bias) print_weight("b_o", w->b_o);
      }
      tensor("output", t);
      return;
    }
    // A tensor this printer has no special words for: still show it.
    begin_step(e.name, e.name);
    shapes(shape_with_axes(t));
    tensor("", t);
  }

  void print_heads_side_by_side(const std::string& which, const AttentionWeights& w) {
    if (!shown_ || options_.list_only) return;
    const Tensor& fused = which == "q" ? w.W_q : which == "k" ? w.W_k : w.W_v;
    line(fmt::format("the file gives one W_{} per head; side by side they are the fused W_{} {}:", which, which,
                     shape_with_axes(fused)));
    std::vector<std::vector<std::string>> columns;
    std::size_t rows = 0;
    for (std::size_t h = 0; h < w.heads.size(); ++h) {
      const Tensor& m = which == "q" ? w.heads[h].W_q : which == "k" ? w.heads[h].W_k : w.heads[h].W_v;
      std::istringstream text(fmt::format("W_{}^({})\n", which, h) + format_array(m, options_.array));
      std::vector<std::string> lines;
      for (std::string l; std::getline(text, l);) lines.push_back(l);
      rows = std::max(rows, lines.size());
      columns.push_back(lines);
    }
    std::vector<std::size_t> widths;
    for (const auto& c : columns) {
      std::size_t wmax = 0;
      for (const auto& l : c) wmax = std::max(wmax, display_width(l));
      widths.push_back(wmax);
    }
    for (std::size_t r = 0; r < rows; ++r) {
      std::string row = "  ";
      for (std::size_t c = 0; c < columns.size(); ++c) {
        const std::string cell = r < columns[c].size() ? columns[c][r] : "";
        row += cell + std::string(widths[c] - display_width(cell) + 3, ' ');
      }
      while (!row.empty() && row.back() == ' ') row.pop_back();
      out_ << row << "\n";
    }
    const std::size_t d = model_.config.d_head;
    for (std::size_t h = 0; h < w.heads.size(); ++h)
      line(fmt::format("W_{}[:, {}:{}] == W_{}^({})  (head {} owns these columns)", which, h * d, (h + 1) * d, which, h,
                       h));
  }

  std::ostream& out_;
  const Trace& trace_;
  const Model& model_;
  const WalkthroughOptions& options_;
  int step_ = 0;
  bool stopped_ = false;
  int printed_steps_ = 0;
  bool shown_ = false;
  std::string current_layer_;
  std::string current_block_;
  std::string pending_layer_header_;
  std::string pending_block_header_;
  std::string pending_block_why_;  // the explanation kind printed under the block header
};

}  // namespace

bool StepFilter::selects(int number, const std::string& kind, const std::string& layer_name) const {
  if (!layer.empty()) {
    if (layer_name.empty()) return false;
    const bool whole = layer.find('.') != std::string::npos;
    const std::string index = layer_name.substr(layer_name.find('.') + 1);
    if (whole ? layer_name != layer : index != layer) return false;
  }
  if (ranges.empty() && kinds.empty()) return true;
  for (const auto& [from, to] : ranges)
    if (number >= from && number <= to) return true;
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

const std::vector<StepKind>& step_kinds() { return kStepKinds; }

StepFilter parse_step_selection(const std::string& text) {
  StepFilter filter;
  std::vector<std::string> names;
  for (const auto& k : kStepKinds) names.emplace_back(k.name);
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) {
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    if (part.empty()) continue;
    int from = 0, to = 0;
    char dash = 0, extra = 0;
    if (std::sscanf(part.c_str(), "%d %c %d %c", &from, &dash, &to, &extra) == 3 && dash == '-' && from >= 1 &&
        to >= from) {
      filter.ranges.emplace_back(from, to);
    } else if (std::sscanf(part.c_str(), "%d %c", &from, &extra) == 1 && from >= 1) {
      filter.ranges.emplace_back(from, from);
    } else if (std::find(names.begin(), names.end(), part) != names.end()) {
      filter.kinds.push_back(part);
    } else if (const char* kind = kind_of_trace_step(part)) {
      filter.kinds.emplace_back(kind);
    } else {
      const std::string suggestion = did_you_mean(part, names);
      throw InputError("--steps", "",
                       fmt::format("expected step numbers (5), ranges (5-9) or step kinds (scores, softmax; "
                                   "'attn steps' lists them), found \"{}\"{}",
                                   part, suggestion.empty() ? "" : " (did you mean \"" + suggestion + "\"?)"));
    }
  }
  return filter;
}

namespace {

// An index given to --batch or --head that the entry's B or H axis does not have: an
// InputError, raised before anything of the walkthrough is printed.
void check_slice_option(const TraceEntry& entry, const std::optional<std::size_t>& index, const std::string& axis,
                        const char* option) {
  if (!index) return;
  const std::size_t a = axis_of(entry.tensor, axis);
  if (a < entry.tensor.rank() && *index >= entry.tensor.shape[a])
    slice_index_error(option, axis, entry.tensor.shape[a], *index);
}

void check_slice_options(const TraceEntry& entry, const WalkthroughOptions& options) {
  check_slice_option(entry, options.filter.batch, "B", "--batch");
  check_slice_option(entry, options.filter.head, "H", "--head");
}

}  // namespace

void print_walkthrough(std::ostream& out, const Trace& trace, const Model& model, const WalkthroughOptions& options) {
  for (const auto& e : trace.entries()) check_slice_options(e, options);
  Printer(out, trace, model, options).run();
}

struct StreamingWalkthrough::State {
  State(std::ostream& out, const Trace& trace, const Model& model, const WalkthroughOptions& options)
      : printer(out, trace, model, options) {}
  Printer printer;
  std::string pending;  // the entry printed when the next one arrives
  std::string layer;    // the layer of the newest entry
};

StreamingWalkthrough::StreamingWalkthrough(std::ostream& out, Trace& trace, const Model& model,
                                           const WalkthroughOptions& options, bool forget)
    : trace_(trace), options_(options), forget_(forget), state_(std::make_unique<State>(out, trace, model, options)) {
  // Every head has the model's H: a bad --head is refused before the first step prints.
  // (--batch is checked on the first entry, which has the B axis when there is one.)
  if (options.filter.head && *options.filter.head >= model.config.num_heads)
    slice_index_error("--head", "H", model.config.num_heads, *options.filter.head);
}

StreamingWalkthrough::~StreamingWalkthrough() = default;

void StreamingWalkthrough::add(const TraceEntry& entry) {
  check_slice_options(entry, options_);
  const std::string name = entry.name;  // `entry` may move once entries are forgotten
  print_pending();
  const std::string layer = layer_of(name);
  if (forget_ && !layer.empty() && layer != state_->layer) {
    // A new layer: the earlier layers' tensors are not looked at again, except their
    // outputs (B,S,N), which the next layer's first steps and the decoder's
    // cross-attention read. Entries outside the layers (tokens, masks, input) stay.
    trace_.forget_entries_if([&](const TraceEntry& e) {
      const std::string l = layer_of(e.name);
      return !l.empty() && l != layer && !ends_with(e.name, ".output") && !ends_with(e.name, ".concat");
    });
  }
  if (!layer.empty()) state_->layer = layer;
  state_->pending = name;
}

void StreamingWalkthrough::finish() { print_pending(); }

void StreamingWalkthrough::print_pending() {
  if (state_->pending.empty()) return;
  const TraceEntry* entry = trace_.find(state_->pending);
  state_->pending.clear();
  if (entry) state_->printer.print(*entry);
}

}  // namespace attn
