// The rest of a layer: residual connections, layer norms, the feed-forward network, the
// layer's output.
#include <algorithm>

#include <fmt/format.h>

#include "present/step_printers.h"
#include "present/tensor_views.h"

namespace attn {

namespace {

// The sub-layer a residual connection goes around.
const char* sublayer_of(const StepId& id) {
  const bool decoder = id.stack == Stack::Decoder;
  if (id.number == 1) return decoder ? "self-attention" : "attention";
  if (id.number == 2) return decoder ? "cross-attention" : "feed-forward";
  return "feed-forward";
}

const char* norm_title(const StepId& id) {
  if (id.kind == StepKind::AddNorm) return "Norm (LayerNorm of the residual sum)";
  if (id.kind == StepKind::FinalNorm)
    return id.stack == Stack::Decoder ? "Final LayerNorm of the decoder stack" : "Final LayerNorm of the encoder stack";
  return "LayerNorm before the sub-layer (pre-norm)";
}

}  // namespace

void print_residual(const TraceEntry& e, PrintContext& c) {
  print_step_text(e, c,
                  {"residual", fmt::format("Add (residual connection around the {})", sublayer_of(e.id)), "add_norm",
                   "r = x + Sublayer(x): the sub-layer's output added back to its input", "+", "r"});
}

void print_norm(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  c.page.begin_step("norm", norm_title(e.id), "add_norm");
  c.page.formula(
      fmt::format("LN(x) = (x - mean) / sqrt(var + eps) · gamma + beta, per position over its d_model values "
                  "(var divides by N; eps = {})",
                  plain_number(c.model.config.layer_norm_eps, 10)));
  c.page.shapes(shape_with_axes(t) + " -> " + shape_with_axes(t));
  c.page.tensor("LN", t);
  const NormWeights* norm = c.norm_weights(e.id);
  const TraceEntry* input = c.operand_entry(e, 0);
  if (!norm || !input) return;
  const Tensor x = batch_item(input->tensor, std::min(c.cell_batch(), batch_count(input->tensor) - 1));
  const std::size_t row = c.cell_row();
  if (row < x.shape[0])
    c.page.worked(worked_layer_norm_row(row_of(x, row), to_vector(norm->gamma.data), to_vector(norm->beta.data),
                                        c.model.config.layer_norm_eps, fmt::format("{}[{}]", input->name, row),
                                        c.worked_options()));
}

void print_ffn_hidden(const TraceEntry& e, PrintContext& c) {
  const bool relu = c.model.config.activation == Activation::ReLU;
  print_step_text(e, c,
                  {"ffn", "Feed-forward, first layer", "feed_forward",
                   std::string("hidden = ") + (relu ? "ReLU" : "GELU") + "(x · W_1 + b_1)" +
                       (relu ? "   (ReLU(v) = max(0, v))" : "   (GELU(v) = v · Φ(v))"),
                   "@", "hidden"});
}

void print_ffn_output(const TraceEntry& e, PrintContext& c) {
  print_step_text(e, c,
                  {"ffn", "Feed-forward, second layer", "feed_forward",
                   "ffn = hidden · W_2 + b_2: back to d_model columns, each position on its own", "@", "ffn"});
}

void print_layer_output(const TraceEntry& e, PrintContext& c) {
  c.page.begin_step("layer_output",
                    fmt::format("{} layer output", e.id.stack == Stack::Encoder ? "Encoder" : "Decoder"),
                    "encoder_stack");
  c.page.formula(fmt::format("the last tensor above, {}: the next layer's input", shape_with_axes(e.tensor)));
}

}  // namespace attn
