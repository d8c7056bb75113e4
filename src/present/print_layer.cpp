// The rest of a layer: residual connections, layer norms, the feed-forward network, the
// layer's output.
#include <algorithm>

#include <fmt/format.h>

#include "present/page.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"

namespace attn {

namespace {

// The sub-layer a residual connection goes around.
const char* sublayer_of(const StepId& id, const Model& model) {
  const bool decoder = id.stack == Stack::Decoder && !model.decoder_only();
  if (id.number == 1) return decoder ? "self-attention" : "attention";
  if (id.number == 2) return decoder ? "cross-attention" : "feed-forward";
  return "feed-forward";
}

std::string norm_title(const StepId& id, const Model& model) {
  if (id.kind == StepKind::AddNorm) return "Norm (LayerNorm of the residual sum)";
  if (id.kind == StepKind::FinalNorm)
    return is_decoder_only(model)       ? "Final LayerNorm of the decoder-only stack"
           : id.stack == Stack::Decoder ? "Final LayerNorm of the decoder stack"
                                        : "Final LayerNorm of the encoder stack";
  return "LayerNorm before the sub-layer (pre-norm)";
}

// Row `row` of batch item b of a (B?,S,N) tensor.
std::vector<double> item_row(const Tensor& t, std::size_t b, std::size_t row) {
  return row_of(batch_item(t, std::min(b, batch_count(t) - 1)), row);
}

// The worked element of x · W + b for the feed-forward layers, named "z" for the first
// layer (whose activation follows) and "ffn" for the second.
void work_ffn_cell(const TraceEntry& e, const Tensor& W, const Tensor& bias, const std::string& result,
                   const std::string& weight, const std::string& bias_name, PrintContext& c) {
  const TraceEntry* input = c.operand_entry(e, 0);
  if (!input || !c.page.detailed()) return;
  const std::size_t b = std::min(c.cell_batch(), batch_count(input->tensor) - 1);
  const Tensor x = batch_item(input->tensor, b);
  const std::size_t i = c.cell_row(), j = c.cell_column();
  if (i >= x.shape[0] || j >= W.shape[1]) return;
  std::string text =
      worked_projection_cell(x, W, bias, i, j, result + c.item(e.tensor, b),
                             display_name(input->id) + c.item(input->tensor, b), weight, bias_name, c.worked_options());
  if (e.id.kind == StepKind::FfnHidden) {
    double z = bias.data.empty() ? 0.0 : bias.data[j];
    double sum = 0;
    for (std::size_t k = 0; k < W.shape[0]; ++k) sum += x.data[i * x.shape[1] + k] * W.data[k * W.shape[1] + j];
    z = sum + z;
    const std::string index = fmt::format("{}[{}][{}]", c.item(e.tensor, b), i, j);
    text += worked_activation(z, c.model.config.activation == Activation::ReLU, "hidden" + index, "z" + index,
                              c.worked_options());
  }
  c.page.worked(text);
}

}  // namespace

void print_residual(const TraceEntry& e, PrintContext& c) {
  const std::string name = display_name(e.id);
  print_step_text(e, c,
                  {"residual", fmt::format("Residual connection around the {}", sublayer_of(e.id, c.model)), "residual",
                   fmt::format("{} = {} + {}   (the sub-layer's output added to its input)", name, c.operand_name(e, 0),
                               c.operand_name(e, 1)),
                   "+"});
  const TraceEntry* x = c.operand_entry(e, 0);
  const TraceEntry* f = c.operand_entry(e, 1);
  const std::size_t b = c.cell_batch(), i = c.cell_row();
  if (!x || !f || !c.page.detailed() || b >= batch_count(e.tensor) || i >= e.tensor.shape[e.tensor.rank() - 2]) return;
  const std::string index = fmt::format("{}[{}]", c.item(e.tensor, b), i);
  c.page.worked(worked_sum_row(item_row(x->tensor, b, i), item_row(f->tensor, b, i), name + index,
                               display_name(x->id) + index, display_name(f->id) + index, c.worked_options()));
}

void print_norm(const TraceEntry& e, PrintContext& c) {
  const Tensor& t = e.tensor;
  c.page.begin_step("norm", norm_title(e.id, c.model), "layer_norm",
                    e.id.kind == StepKind::FinalNorm ? "final_norm" : "norm");
  c.page.formula(fmt::format("{} = LayerNorm({})   (each row x: (x - mean) / √(var + eps) · gamma + beta, eps = {})",
                             display_name(e.id), c.operand_name(e, 0),
                             plain_number(c.model.config.layer_norm_eps, 10)));
  c.page.shapes(shape_with_axes(t) + " -> " + shape_with_axes(t));
  const NormWeights* norm = c.norm_weights(e.id);
  if (norm) c.page.weights({{"gamma", &norm->gamma}, {"beta", &norm->beta}});
  c.page.tensor(display_name(e.id), t);
  const TraceEntry* input = c.operand_entry(e, 0);
  if (!norm || !input) return;
  const std::size_t b = std::min(c.cell_batch(), batch_count(input->tensor) - 1), row = c.cell_row();
  const Tensor x = batch_item(input->tensor, b);
  if (row < x.shape[0])
    c.page.worked(worked_layer_norm_row(
        row_of(x, row), to_vector(norm->gamma.data), to_vector(norm->beta.data), c.model.config.layer_norm_eps,
        fmt::format("{}{}[{}]", display_name(input->id), c.item(input->tensor, b), row), c.worked_options()));
}

namespace {

// One layer of the feed-forward network: x · W + b (then the activation, for the first).
void print_ffn_layer(const TraceEntry& e, PrintContext& c, bool first) {
  const FeedForwardWeights* w = c.ffn_weights(e.id);
  const Tensor* W = w ? (first ? &w->W_1 : &w->W_2) : nullptr;
  const Tensor* b = w ? (first ? &w->b_1 : &w->b_2) : nullptr;
  const std::string n = first ? "1" : "2", bias = b && !b->data.empty() ? " + b_" + n : "";
  const bool relu = c.model.config.activation == Activation::ReLU;
  c.page.begin_step("ffn", first ? "Feed-forward, first layer" : "Feed-forward, second layer", "feed_forward",
                    first ? "ffn_hidden" : "ffn_output");
  c.page.formula(first ? fmt::format("hidden = {0}(z), z = {1} · W_1{2}   ({0}(v) = {3})", relu ? "ReLU" : "GELU",
                                     c.operand_name(e, 0), bias, relu ? "max(0, v)" : "v · Φ(v)")
                       : fmt::format("ffn = hidden · W_2{}   (back to d_model columns)", bias));
  c.page.shapes(equation(e.operands, "@", e.tensor));
  if (w) {
    c.page.weight("W_" + n, *W);
    c.page.weight("b_" + n, *b);
    work_ffn_cell(e, *W, *b, first ? "z" : "ffn", "W_" + n, "b_" + n, c);
  }
  c.page.tensor(display_name(e.id), e.tensor);
}

}  // namespace

void print_ffn_hidden(const TraceEntry& e, PrintContext& c) { print_ffn_layer(e, c, true); }

void print_ffn_output(const TraceEntry& e, PrintContext& c) { print_ffn_layer(e, c, false); }

void print_layer_output(const TraceEntry& e, PrintContext& c) {
  const bool encoder = e.id.stack == Stack::Encoder;
  const bool decoder_only = is_decoder_only(c.model);
  c.page.begin_step("layer_output",
                    fmt::format("{} layer output", decoder_only ? "Decoder-only"
                                                   : encoder    ? "Encoder"
                                                                : "Decoder"),
                    decoder_only ? "decoder_only_stack"
                    : encoder    ? "encoder_stack"
                                 : "decoder_stack");
  // The last tensor of the layer: the last residual sum (pre-norm) or its norm (post-norm).
  const int last = encoder || decoder_only ? 2 : 3;
  const std::string last_name = fmt::format("{}{}", c.model.config.norm_first ? "residual" : "add_norm", last);
  c.page.formula(fmt::format("{} = {}   (the next layer's input)", display_name(e.id), last_name));
  c.page.shapes(shape_with_axes(e.tensor));
  c.page.key_tensor(display_name(e.id), e.tensor);
}

}  // namespace attn
