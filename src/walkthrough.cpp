#include "attn/walkthrough.h"

#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "attn/attention.h"

namespace attn {

namespace {

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

class Printer {
 public:
  Printer(std::ostream& out, const Trace& trace, const Model& model, const WalkthroughOptions& options)
      : out_(out), trace_(trace), model_(model), options_(options) {}

  void run() {
    for (const auto& entry : trace_.entries()) print_entry(entry);
    for (const auto& w : trace_.warnings()) out_ << "warning: " << w.name << ": " << w.message << "\n";
  }

 private:
  void title(const std::string& text) {
    ++step_;
    const std::string head = fmt::format("── Step {}: {} ", step_, text);
    std::string rule;
    for (std::size_t n = display_width(head); n < 72; ++n) rule += "─";
    out_ << "\n" << head << rule << "\n";
  }

  static std::size_t display_width(const std::string& s) {
    std::size_t n = 0;
    for (unsigned char c : s)
      if ((c & 0xC0) != 0x80) ++n;
    return n;
  }

  void line(const std::string& text) { out_ << "  " << text << "\n"; }

  void tensor(const std::string& label, const Tensor& t) {
    const std::string prefix = label.empty() ? "" : label + " = ";
    out_ << prefix << format_array(t, options_.array, prefix.size()) << "\n";
  }

  const AttentionWeights* attention_for(const std::string& block) const {
    // "encoder.<i>.attention"
    unsigned layer = 0;
    if (std::sscanf(block.c_str(), "encoder.%u.attention", &layer) == 1 && layer < model_.encoder.size())
      return &model_.encoder[layer].attention;
    return nullptr;
  }

  void block_header(const std::string& block) {
    if (block == current_block_) return;
    current_block_ = block;
    unsigned layer = 0;
    if (std::sscanf(block.c_str(), "encoder.%u.attention", &layer) == 1) {
      const auto& c = model_.config;
      out_ << fmt::format("\n══ Encoder layer {}: multi-head self-attention, H={} heads of d={} (d_model N={}) ══\n",
                          layer, c.num_heads, c.d_head, c.d_model);
    }
  }

  void print_weight(const std::string& label, const Tensor& w) {
    if (options_.show_weights && !w.data.empty()) tensor(label, w);
  }

  void print_entry(const TraceEntry& e) {
    const auto [block, step] = split_name(e.name);
    const Tensor& t = e.tensor;
    if (e.name == "input") {
      title("Input X");
      line("X: one row of d_model numbers per position");
      line(shape_with_axes(t));
      tensor("X", t);
      return;
    }
    if (e.name == "encoder.mask") {
      title("Causal mask");
      line("mask[i][j] = 0 where position i may attend to j (j <= i), -inf above the diagonal");
      line(shape_with_axes(t));
      tensor("mask", t);
      return;
    }
    block_header(block);
    const AttentionWeights* w = attention_for(block);
    const std::size_t H = model_.config.num_heads, d = model_.config.d_head;
    if (step == "q" || step == "k" || step == "v") {
      const std::string upper = step == "q" ? "Q" : step == "k" ? "K" : "V";
      const std::string what = step == "q" ? "Query" : step == "k" ? "Key" : "Value";
      const bool bias = w && !(step == "q" ? w->b_q : step == "k" ? w->b_k : w->b_v).data.empty();
      title(fmt::format("{} projection", what));
      line(fmt::format("{} = X · W_{}{}", upper, step, bias ? " + b_" + step : ""));
      line(equation(e.operands, "@", t));
      if (w) {
        const Tensor& W = step == "q" ? w->W_q : step == "k" ? w->W_k : w->W_v;
        if (!w->heads.empty()) print_heads_side_by_side(step, *w);
        print_weight("W_" + step, W);
        if (bias) print_weight("b_" + step, step == "q" ? w->b_q : step == "k" ? w->b_k : w->b_v);
      }
      tensor(upper, t);
      return;
    }
    if (step == "q_heads" || step == "k_heads" || step == "v_heads") {
      const std::string upper = step == "q_heads" ? "Q" : step == "k_heads" ? "K" : "V";
      const TraceEntry* projection = trace_.find(block + "." + step.substr(0, 1));
      title(fmt::format("Split {} into {} heads", upper, H));
      if (projection) {
        const Tensor view = view_split(projection->tensor, H);
        line(fmt::format("1. reshape: {} -> {}   (head h owns columns h*d .. h*d+{})",
                         shape_with_axes(projection->tensor), shape_with_axes(view), d - 1));
        tensor(upper, view);
        line(fmt::format("2. transpose{}: {} -> {}   (heads first: one (S,d) matrix per head)",
                         view.rank() == 4 ? "(0, 2, 1, 3)" : "(1, 0, 2)", shape_with_axes(view), shape_with_axes(t)));
      }
      tensor(upper, t);
      return;
    }
    if (step == "k_t") {
      title("Transpose K");
      line("Kᵀ = K.transpose(-2, -1): swap the last two axes so that Q · Kᵀ sums over d");
      line(equation(e.operands, "->", t));
      tensor("K_T", t);
      return;
    }
    if (step == "scores") {
      title("Raw scores");
      line("scores = Q · Kᵀ   (scores[i][j] = query i · key j)");
      line(equation(e.operands, "@", t));
      tensor("scores", t);
      return;
    }
    if (step == "scaled_scores") {
      title("Scale");
      line(fmt::format("scaled = scores / √d = scores / √{} = scores / {}", d, format_number(std::sqrt(double(d)), 4)));
      line(shape_with_axes(t) + " / scalar -> " + shape_with_axes(t));
      tensor("scaled", t);
      return;
    }
    if (step == "masked_scores") {
      title("Mask");
      line("masked = scaled + mask   (-inf where a key must not be seen; softmax turns it into 0)");
      line(equation(e.operands, "+", t));
      tensor("masked", t);
      return;
    }
    if (step == "weights") {
      title("Softmax");
      line("weights = softmax(scaled, axis=-1) = exp(x - max) / sum(exp(x - max)), row by row");
      line(shape_with_axes(t) + " -> " + shape_with_axes(t));
      tensor("weights", t);
      Tensor sums(Shape(t.shape.begin(), t.shape.end() - 1), AxisNames(t.axes.begin(), t.axes.end() - 1));
      const std::size_t T = t.shape.back();
      for (std::size_t r = 0; r < sums.size(); ++r) {
        double s = 0;
        for (std::size_t j = 0; j < T; ++j) s += t.data[r * T + j];
        sums.data[r] = s;
      }
      line("each row sums to 1:");
      tensor("row sums", sums);
      return;
    }
    if (step == "context") {
      title("Context");
      line("context = weights · V   (each row: a weighted sum of value rows)");
      line(equation(e.operands, "@", t));
      tensor("context", t);
      return;
    }
    if (step == "concat") {
      title("Merge heads");
      const TraceEntry* context = trace_.find(block + ".context");
      if (context) {
        const Tensor& c = context->tensor;
        const bool batched = c.rank() == 4;
        const Tensor back = transposed(c, batched ? std::vector<std::size_t>{0, 2, 1, 3} : std::vector<std::size_t>{1, 0, 2});
        line(fmt::format("1. transpose{}: {} -> {}   (positions first again)", batched ? "(0, 2, 1, 3)" : "(1, 0, 2)",
                         shape_with_axes(c), shape_with_axes(back)));
        tensor("context", back);
        line(fmt::format("2. reshape: {} -> {}   (concat: the heads' vectors side by side)", shape_with_axes(back),
                         shape_with_axes(t)));
      }
      tensor("concat", t);
      if (w && !w->has_output_projection()) {
        title("Output projection (skipped)");
        line("this block has no W_o: its output is the concatenation " + shape_with_axes(t));
      }
      return;
    }
    if (step == "output") {
      const bool bias = w && !w->b_o.data.empty();
      title("Output projection");
      line(std::string("output = concat · W_o") + (bias ? " + b_o" : ""));
      line(equation(e.operands, "@", t));
      if (w) {
        print_weight("W_o", w->W_o);
        if (bias) print_weight("b_o", w->b_o);
      }
      tensor("output", t);
      return;
    }
    // A tensor this printer has no special words for: still show it.
    title(e.name);
    line(shape_with_axes(t));
    tensor("", t);
  }

  void print_heads_side_by_side(const std::string& which, const AttentionWeights& w) {
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
      line(fmt::format("W_{}[:, {}:{}] == W_{}^({})  (head {} owns these columns)", which, h * d, (h + 1) * d, which, h, h));
  }

  std::ostream& out_;
  const Trace& trace_;
  const Model& model_;
  const WalkthroughOptions& options_;
  int step_ = 0;
  std::string current_block_;
};

}  // namespace

void print_walkthrough(std::ostream& out, const Trace& trace, const Model& model, const WalkthroughOptions& options) {
  Printer(out, trace, model, options).run();
}

}  // namespace attn
