// The walkthrough's printers: one small function per kind of trace entry, chosen by the
// entry's StepKind through its row of the table of step kinds (attn/step_kinds.def). Each prints its step on the Page:
// title, formula, shapes, the tensor, and what a learner checks by hand.
#ifndef ATTN_PRESENT_STEP_PRINTERS_H_
#define ATTN_PRESENT_STEP_PRINTERS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attn/model.h"
#include "attn/trace.h"
#include "attn/walkthrough.h"
#include "present/page.h"
#include "present/worked_arithmetic.h"

namespace attn {

// What a printer reads besides its entry.
struct PrintContext {
  const Trace& trace;
  const Model& model;
  const RunInput& input;  // the run's input: its batch layout, labels, what the decoder started from
  const WalkthroughOptions& options;
  Page& page;

  // The element --cell names: batch item, head, row, column (0,0,0,0 by default; --batch
  // and --head take precedence).
  std::size_t cell_batch() const;
  std::size_t cell_head() const;
  std::size_t cell_row() const { return options.cell_given ? options.cell[2] : 0; }
  std::size_t cell_column() const { return options.cell_given ? options.cell[3] : 0; }
  WorkedOptions worked_options() const;

  // The labels of a sequence's positions for batch item b: its tokens in double quotes
  // ("\"I\""), or the positions "0", "1", ... when it has none.
  std::vector<std::string> labels(Sequence sequence, std::size_t b, std::size_t n, bool quoted = true) const;
  // "[b]" when `t` has a batch axis, "" when it has none: the front of a full index.
  std::string item(const Tensor& t, std::size_t b) const;
  // The name of operand i of `e`: its entry's display_name, or the weight's name.
  std::string operand_name(const TraceEntry& e, std::size_t i) const;
  // The kept entry of the same block as `id` made by step `kind` (the scores beside the
  // weights, say), or nullptr.
  const TraceEntry* sibling(const StepId& id, StepKind kind) const;
  // The same, of the forward pass: from a gradient entry, the tensor it is the gradient of
  // (kind == id.kind) or a forward tensor of the same block.
  const TraceEntry* forward_sibling(const StepId& id, StepKind kind) const;
  // The kept entry that is operand i of `e`, or nullptr (a weight, or forgotten).
  const TraceEntry* operand_entry(const TraceEntry& e, std::size_t i) const;
  // Matrices (S,d) of head cell_head() of batch item cell_batch() of two earlier entries
  // of e's block (Q and K beside the scores), or nullopt when either is gone or the cell is
  // outside them.
  std::optional<std::pair<Tensor, Tensor>> cell_head_matrices(const TraceEntry& e, StepKind a, StepKind b) const;
  // The configuration the entry's block ran with: the decoder's heads for a decoder's
  // (ModelConfig::decoder_config), the model's otherwise.
  ModelConfig config(const StepId& id) const { return model.config.stack_config(id.stack == Stack::Decoder); }
  // The model's weights for the block or the norm an entry belongs to.
  const AttentionWeights* attention_weights(const StepId& id) const;
  const NormWeights* norm_weights(const StepId& id) const;
  const FeedForwardWeights* ffn_weights(const StepId& id) const;
};

// The entries an attention block's scores and context read, which the variants change:
// the queries (q_rope with RoPE, else q_heads), the keys before their transpose (k_repeat
// with grouped-query attention, else k_rope with RoPE, else k_heads) and the values
// (v_repeat, else v_heads). `id` is any entry of the block, forward or gradient.
StepKind attending_queries(const PrintContext& c, const StepId& id);
StepKind attended_keys(const PrintContext& c, const StepId& id);
StepKind attended_values(const PrintContext& c, const StepId& id);

// The one name a tensor goes by in the walkthrough: the label of its array, its stats line,
// and every formula and worked line that uses it ("Q", "scores", "residual1",
// "encoder.0.output").
std::string display_name(const StepId& id);

using StepPrinter = void (*)(const TraceEntry& entry, PrintContext& context);

// The printer of a kind of entry, and the kind of step --steps and `attn steps` call it.
struct StepPrinterInfo {
  const char* shown_kind;  // "split_heads" for q_heads, k_heads, v_heads
  StepPrinter print;
  bool in_layer;  // whether it belongs to the layers' headers (Page::enter)
};
const StepPrinterInfo& printer_of(StepKind kind);
// The printer of a gradient entry (attn grad), by the kind of the forward entry it is the
// gradient of: the backward of the step that made that entry.
const StepPrinterInfo& backward_printer_of(StepKind kind);

// The page and the explanation of a kind, from its row of the table (attn/step_kinds.def):
// what a printer passes to Page::begin_step unless a variant has its own.
const char* page_of(StepKind kind);
const char* explanation_of(StepKind kind);

// The printers the table of step kinds names, declared from it: the forward's by the part
// of the model they show (print_input.cpp, print_attention.cpp, print_layer.cpp,
// print_output.cpp), the backward's in print_backward_*.cpp (a step added since the q/k/v
// bias keeps its backward's beside its forward's, print_bias_backward and
// print_qk_norm_backward in print_attention.cpp: one file for a new step), each showing
// dL/d(its entry's forward tensor) and how the step that made it passes the gradient on to
// its inputs and weights. print_not_a_gradient is for the kinds without one.
#define ATTN_STEP(kind, trace, display, page, why, forward, backward, ...) \
  void forward(const TraceEntry& e, PrintContext& c);                      \
  void backward(const TraceEntry& e, PrintContext& c);
#include "attn/step_kinds.def"
#undef ATTN_STEP

// Shared by the printers.
// The worked element of a logits entry (output.logits, lens.<l>.logits), in detailed steps:
// logits[i]["token"] = x[i] · E[id] (tied) or x[i] · W_out[:,id] + b_out[id], for the most
// probable token of row --cell's i (print_output.cpp).
void work_logit(const TraceEntry& e, PrintContext& c);
// With --ablate, under the next-token probabilities `e` of the ablated run: each position's
// most probable token without the ablation, its probability with and without, and the
// ablated run's own pick (print_ablation.cpp).
void print_ablation_comparison(const TraceEntry& e, PrintContext& c);
// The four lines most steps open with: title (with its explanation), formula, shape
// equation over the entry's operands, the tensor under its display_name.
struct StepText {
  const char* shown_kind;
  std::string title;
  std::string why;
  std::string formula;
  const char* op;  // between the operands' shapes: "@", "+", "->"
};
void print_step_text(const TraceEntry& e, PrintContext& c, const StepText& text);
// The same for a gradient entry, dL/d(a forward tensor): the backward of the step that made
// that tensor. "<title>, backward", the formulas that take dL/d(its result) to dL/d(its
// inputs and weights), the shapes "dL/d(result) -> dL/d(each operand)", dL/d<name>.
struct BackwardText {
  const char* shown_kind;
  std::string title;  // the forward step's: "Softmax"
  std::vector<std::string> formulas;
  std::string label;  // "dL/dweights"
};
void print_backward_text(const TraceEntry& e, PrintContext& c, const BackwardText& text);
// The gradients of the weights of `kind` at e's place (each head's, for per-head weights),
// as tensors labelled dL/dW_q, dL/dW_q^(1), ...
void print_weight_gradients(const TraceEntry& e, PrintContext& c, WeightKind kind, int norm_number = 0);
// Whether `piece` is a mask token of the model's tokenizer, the one a masked-LM head fills
// in: a special token spelled as BERT's "[MASK]" (RoBERTa's "<mask>") (print_context.cpp).
bool is_mask_token(const Model& model, const std::string& piece);
// A number in running text: NumPy's digits without its trailing point ("2", not "2.").
std::string plain_number(double value, int precision = 4);
// "(B=2,S=6,N=4) @ (N=4,H*d=4) -> (B=2,S=6,H*d=4)"
std::string equation(const std::vector<Operand>& operands, const char* op, const Tensor& result);

}  // namespace attn

#endif  // ATTN_PRESENT_STEP_PRINTERS_H_
