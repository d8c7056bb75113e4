#include "attn/walkthrough.h"

#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "attn/attention.h"
#include "attn/output_head.h"

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

class Printer {
 public:
  Printer(std::ostream& out, const Trace& trace, const Model& model, const WalkthroughOptions& options)
      : out_(out), trace_(trace), model_(model), options_(options) {}

  void run() {
    for (const auto& entry : trace_.entries()) print_entry(entry);
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

  // Headers when the walkthrough enters a new layer or a new attention block.
  void block_header(const std::string& block) {
    unsigned layer = 0;
    char stack[16] = {0};
    if (std::sscanf(block.c_str(), "%15[a-z].%u", stack, &layer) == 2) {
      const std::string layer_name = fmt::format("{}.{}", stack, layer);
      if (layer_name != current_layer_) {
        current_layer_ = layer_name;
        const bool encoder = std::string(stack) == "encoder";
        const bool full = encoder ? model_.encoder[layer].full : true;
        out_ << fmt::format("\n══ {} layer {} of {}{} ══\n", encoder ? "Encoder" : "Decoder", layer,
                            encoder ? model_.encoder.size() : model_.decoder.size(),
                            !full ? " (an attention block alone)"
                            : model_.config.norm_first ? " (pre-norm: x + f(LayerNorm(x)))"
                                                       : " (post-norm, as the paper: LayerNorm(x + f(x)))");
      }
    }
    if (block == current_block_) return;
    current_block_ = block;
    const auto& c = model_.config;
    const std::string heads = fmt::format("H={} head{} of d={} (d_model N={})", c.num_heads, c.num_heads == 1 ? "" : "s",
                                          c.d_head, c.d_model);
    if (block.size() > 10 && block.compare(block.size() - 10, 10, ".attention") == 0)
      out_ << fmt::format("\n── Multi-head self-attention, {} ──\n", heads);
    else if (block.find(".self_attention") != std::string::npos)
      out_ << fmt::format("\n── Masked multi-head self-attention over the target, {} ──\n", heads);
    else if (block.find(".cross_attention") != std::string::npos)
      out_ << fmt::format("\n── Cross-attention: queries from the decoder, keys and values from the encoder's output, {} ──\n", heads);
  }

  void print_weight(const std::string& label, const Tensor& w) {
    if (options_.show_weights && !w.data.empty()) tensor(label, w);
  }

  void print_entry(const TraceEntry& e) {
    const auto [block, step] = split_name(e.name);
    if (print_sequence_step(e) || print_mask_step(e) || print_output_step(e)) {
      print_warnings(e.name);
      return;
    }
    block_header(block);
    if (print_layer_step(e, block, step)) {
      print_warnings(e.name);
      return;
    }
    print_attention_step(e, block, step);
    print_warnings(e.name);
  }

  void print_warnings(const std::string& name) {
    for (const auto& w : trace_.warnings())
      if (w.name == name) out_ << "  note: " << w.message << "\n";
  }

  const std::vector<std::vector<std::string>>* tokens_of(const std::string& which) const { return trace_.tokens(which); }

  // Tokens, ids, embedding lookup, positions, the input: the start of either sequence.
  bool print_sequence_step(const TraceEntry& e) {
    const Tensor& t = e.tensor;
    const bool target = e.name.rfind("target_", 0) == 0;
    const std::string which = target ? "target" : "source";
    const std::string base = target ? e.name.substr(7) : e.name;
    if (base == "tokens.ids") {
      title(target ? "Target tokens and ids (the decoder's input)" : "Tokens and ids");
      line("split on whitespace, punctuation on its own; each token's id is its row in the vocabulary");
      if (const auto* tokens = tokens_of(which)) {
        for (std::size_t b = 0; b < tokens->size(); ++b) {
          std::string row = trace_.drops_batch_axis() ? "" : fmt::format("[{}] ", b);
          for (std::size_t s = 0; s < (*tokens)[b].size(); ++s)
            row += fmt::format("{}\"{}\"→{}", s ? "  " : "", (*tokens)[b][s],
                               static_cast<long long>(t.data[b * (*tokens)[b].size() + s]));
          line(row);
        }
      }
      line(shape_with_axes(t));
      ArrayFormatOptions ints = options_.array;
      ints.integers = true;
      out_ << "ids = " << format_array(t, ints, 6) << "\n";
      return true;
    }
    if (base == "tokens.padding_mask") {
      title(target ? "Target padding mask" : "Padding mask");
      line("1 where a sentence was padded with <PAD> to the batch's longest; those keys get -inf below");
      line(shape_with_axes(t));
      ArrayFormatOptions ints = options_.array;
      ints.integers = true;
      out_ << "padding = " << format_array(t, ints, 10) << "\n";
      return true;
    }
    if (base == "embedding.lookup") {
      title(target ? "Target embedding lookup" : "Embedding lookup");
      line("x = E[ids]: row ids[s] of the embedding table E, the same as one_hot(ids) @ E without the multiplications");
      if (e.operands.size() == 2)
        line(fmt::format("{} ids into E {} -> {}", shape_with_axes(e.operands[0].shape, e.operands[0].axes),
                         shape_with_axes(e.operands[1].shape, e.operands[1].axes), shape_with_axes(t)));
      if (const auto* tokens = tokens_of(which)) {
        const std::size_t N = model_.config.d_model;
        const std::size_t shown = std::min<std::size_t>((*tokens)[0].size(), 8);
        for (std::size_t s = 0; s < shown; ++s) {
          const auto id = model_.vocab.find((*tokens)[0][s]);
          Tensor row({N}, {"N"});
          std::copy(t.data.begin() + static_cast<std::ptrdiff_t>(s * N), t.data.begin() + static_cast<std::ptrdiff_t>((s + 1) * N),
                    row.data.begin());
          line(fmt::format("E[{}] (\"{}\") = {}", id ? std::to_string(*id) : "<UNK>", (*tokens)[0][s],
                           format_array(row, options_.array)));
        }
      }
      tensor("x", t);
      return true;
    }
    if (base == "embedding.scaled") {
      title("Scale the embeddings");
      line(fmt::format("x = x · √d_model = x · √{} = x · {}", model_.config.d_model,
                       plain_number(std::sqrt(double(model_.config.d_model)))));
      tensor("x", t);
      return true;
    }
    if (base == "embedding.positional") {
      if (model_.config.positional_encoding == PositionalEncoding::Learned) {
        title("Learned positions");
        line("PE = P[0:S]: the first S rows of the learned position table");
      } else {
        title("Sinusoidal positional encoding");
        line("PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model))");
        if (t.rank() == 2 && t.shape[0] > 1 && t.shape[1] > 2) {
          const double N = static_cast<double>(t.shape[1]);
          line(fmt::format("e.g. PE(1, 2) = sin(1 / 10000^(2/{0})) = sin({1}) = {2};  PE(1, 3) = cos({1}) = {3}", t.shape[1],
                           plain_number(1.0 / std::pow(10000.0, 2.0 / N), 6), plain_number(t.at({1, 2}), 6),
                           plain_number(t.at({1, 3}), 6)));
        }
      }
      line(shape_with_axes(t) + ", the same rows for every sentence in the batch");
      tensor("PE", t);
      return true;
    }
    if (e.name == "input" || e.name == "target_input") {
      const bool from_tokens = trace_.find(target ? "target_embedding.lookup" : "embedding.lookup") != nullptr;
      title(target ? "Decoder input" : "Input X");
      if (from_tokens && model_.config.positional_encoding != PositionalEncoding::None)
        line(target ? "Y = E[target ids] + PE: the decoder's input" : "X = E[ids] + PE: each token's embedding plus its position");
      else if (from_tokens)
        line("X = E[ids] (no positional encoding)");
      else
        line("X: one row of d_model numbers per position, as given");
      line(shape_with_axes(t));
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
    if (cross) title("Cross-attention mask (source padding)");
    else if (self) title("Decoder self-attention mask (causal)");
    else title(model_.config.causal ? "Causal mask" : "Padding mask for self-attention");
    if (self || (encoder && model_.config.causal))
      line("position i may attend to positions j <= i: nothing from the future");
    if (t.rank() == 3 || cross) line("padded keys (<PAD>) are hidden from every query");
    Tensor hidden = t;
    for (double& v : hidden.data) v = std::isinf(v) ? 1.0 : 0.0;
    ArrayFormatOptions ints = options_.array;
    ints.integers = true;
    line(shape_with_axes(t) + ", 1 = hidden:");
    out_ << "hidden = " << format_array(hidden, ints, 9) << "\n";
    line("added to the scores (0 keeps a score, -inf removes it):");
    tensor("mask", t);
    return true;
  }

  // Residuals, layer norms, feed-forward, a layer's output.
  bool print_layer_step(const TraceEntry& e, const std::string& block, const std::string& step) {
    const Tensor& t = e.tensor;
    if (step.rfind("residual", 0) == 0) {
      const char* which = step == "residual1" ? (block.rfind("decoder", 0) == 0 ? "self-attention" : "attention")
                          : step == "residual2" ? (block.rfind("decoder", 0) == 0 ? "cross-attention" : "feed-forward")
                                                : "feed-forward";
      title(fmt::format("Add (residual connection around the {})", which));
      line("r = x + Sublayer(x): the sub-layer's output added back to its input");
      line(equation(e.operands, "+", t));
      tensor("r", t);
      return true;
    }
    const bool add_norm = step.rfind("add_norm", 0) == 0;
    if (add_norm || step == "norm1" || step == "norm2" || step == "norm3" || e.name == "encoder.norm" ||
        e.name == "decoder.norm") {
      title(add_norm ? "Norm (LayerNorm of the residual sum)"
            : e.name == "encoder.norm" ? "Final LayerNorm of the encoder stack"
            : e.name == "decoder.norm" ? "Final LayerNorm of the decoder stack"
                                       : "LayerNorm before the sub-layer (pre-norm)");
      line(fmt::format("LN(x) = (x - mean) / sqrt(var + eps) · gamma + beta, per position over its d_model values "
                       "(var divides by N; eps = {})",
                       plain_number(model_.config.layer_norm_eps, 10)));
      line(shape_with_axes(t) + " -> " + shape_with_axes(t));
      tensor("LN", t);
      return true;
    }
    if (block.size() > 4 && block.compare(block.size() - 4, 4, ".ffn") == 0) {
      const bool relu = model_.config.activation == Activation::ReLU;
      if (step == "hidden") {
        title("Feed-forward, first layer");
        line(std::string("hidden = ") + (relu ? "ReLU" : "GELU") + "(x · W_1 + b_1)" +
             (relu ? "   (ReLU(v) = max(0, v))" : "   (GELU(v) = v · Φ(v))"));
        line(equation(e.operands, "@", t));
        tensor("hidden", t);
      } else {
        title("Feed-forward, second layer");
        line("ffn = hidden · W_2 + b_2: back to d_model columns, each position on its own");
        line(equation(e.operands, "@", t));
        tensor("ffn", t);
      }
      return true;
    }
    if (step == "output" && block.find('.') != std::string::npos && block.find("attention") == std::string::npos) {
      title(fmt::format("{} layer output", block.rfind("encoder", 0) == 0 ? "Encoder" : "Decoder"));
      line(fmt::format("the last tensor above, {}: the next layer's input", shape_with_axes(t)));
      return true;
    }
    return false;
  }

  // Logits and the softmax over the vocabulary, with the most likely next tokens.
  bool print_output_step(const TraceEntry& e) {
    const Tensor& t = e.tensor;
    if (e.name == "output.logits") {
      title("Output logits");
      line(model_.output.tied ? "logits = x · Eᵀ: one score per vocabulary token (the embedding table, transposed)"
                              : "logits = x · W_out + b_out: one score per vocabulary token");
      line(equation(e.operands, "@", t));
      tensor("logits", t);
      return true;
    }
    if (e.name != "output.probabilities") return false;
    title("Softmax over the vocabulary");
    line("p = softmax(logits): the probability of each token being the next one; each row sums to 1");
    line(shape_with_axes(t));
    tensor("p", t);
    const std::size_t V = t.shape.back();
    const std::size_t rows = t.size() / V;
    const std::size_t len = t.rank() >= 2 ? t.shape[t.rank() - 2] : 1;
    const auto* tokens = tokens_of(trace_.tokens("target") ? "target" : "source");
    std::string greedy;
    for (std::size_t r = 0; r < rows; ++r) {
      const auto top = top_tokens(t.data.data() + r * V, V, 5);
      const std::size_t b = r / len, pos = r % len;
      const std::string after = tokens && b < tokens->size() && pos < (*tokens)[b].size() ? (*tokens)[b][pos] : "";
      std::string row;
      for (const auto& tp : top)
        row += fmt::format("{}\"{}\" {}", row.empty() ? "" : ",  ", model_.vocab.token(tp.id), plain_number(tp.probability, 4));
      line(fmt::format("{}after \"{}\" (position {}): top 5: {}", rows > len ? fmt::format("[{}] ", b) : "", after, pos, row));
      greedy += (greedy.empty() ? "" : " ") + model_.vocab.token(top[0].id);
    }
    line("greedy pick (the most probable token at each position): " + greedy);
    return true;
  }

  void print_attention_step(const TraceEntry& e, const std::string& block, const std::string& step) {
    const Tensor& t = e.tensor;
    const AttentionWeights* w = attention_for(block);
    const std::size_t H = model_.config.num_heads, d = model_.config.d_head;
    if (step == "q" || step == "k" || step == "v") {
      const std::string upper = step == "q" ? "Q" : step == "k" ? "K" : "V";
      const std::string what = step == "q" ? "Query" : step == "k" ? "Key" : "Value";
      const bool bias = w && !(step == "q" ? w->b_q : step == "k" ? w->b_k : w->b_v).data.empty();
      title(fmt::format("{} projection", what));
      // Cross-attention: queries from the decoder (Y), keys and values from the encoder's output (M).
      const bool cross = block.find("cross_attention") != std::string::npos;
      const std::string source = !cross ? (block.rfind("decoder", 0) == 0 ? "Y" : "X") : (step == "q" ? "Y" : "M");
      line(fmt::format("{} = {} · W_{}{}{}", upper, source, step, bias ? " + b_" + step : "",
                       source == "M" ? "   (M: the encoder's output, the 'memory')" : ""));
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
      title(H == 1 ? fmt::format("Split {} into heads (one head: only the axes move)", upper)
                   : fmt::format("Split {} into {} heads", upper, H));
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
      line(fmt::format("scaled = scores / √d = scores / √{} = scores / {}", d, plain_number(std::sqrt(double(d)))));
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
      line(fmt::format("weights = softmax({}, axis=-1) = exp(x - max) / sum(exp(x - max)), row by row",
                       trace_.find(block + ".masked_scores") ? "masked" : "scaled"));
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
  std::string current_layer_;
  std::string current_block_;
};

}  // namespace

void print_walkthrough(std::ostream& out, const Trace& trace, const Model& model, const WalkthroughOptions& options) {
  Printer(out, trace, model, options).run();
}

}  // namespace attn
