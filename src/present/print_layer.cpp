// The rest of a layer: residual connections, layer norms (and their backward), the
// feed-forward network, the layer's output.
#include <algorithm>

#include <fmt/format.h>

#include "attn/step_roles.h"
#include "present/page.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"

namespace attn {

namespace {

// The sub-layer a residual connection goes around.
const char* sublayer_of(const StepId& id, const Model& model) {
  if (model.config.parallel_residual) return id.number == 1 ? "attention and the feed-forward" : "both sub-layers";
  const bool decoder = id.stack == Stack::Decoder && !model.decoder_only();
  if (id.number == 1) return decoder ? "self-attention" : "attention";
  if (id.number == 2) return decoder ? "cross-attention" : "feed-forward";
  return "feed-forward";
}

std::string norm_title(const StepId& id, const Model& model) {
  const char* norm = root_mean_square(model.config.norm) ? "RMSNorm" : "LayerNorm";
  if (id.kind == StepKind::AddNorm) return fmt::format("Norm ({} of the residual sum)", norm);
  if (id.kind == StepKind::EmbeddingNorm && id.stack != Stack::None)  // a stack's own (BART's)
    return fmt::format("{} of the {}'s input", norm, id.sequence == Sequence::Target ? "decoder" : "encoder");
  if (id.kind == StepKind::EmbeddingNorm) return fmt::format("{} of the embeddings", norm);
  if (id.kind == StepKind::HeadTransformNorm) return fmt::format("{} of the head's transform", norm);
  if (id.kind == StepKind::FinalNorm)
    return fmt::format("Final {} of the {} stack", norm,
                       is_decoder_only(model)       ? "decoder-only"
                       : id.stack == Stack::Decoder ? "decoder"
                                                    : "encoder");
  return fmt::format("{} before the sub-layer (pre-norm)", norm);
}

// A norm's eps as the formula shows it: 0.00001; BERT's 1e-12, which ten decimals round to 0.
std::string eps_text(double eps) { return eps < 1e-10 ? fmt::format("{:g}", eps) : plain_number(eps, 10); }

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
    const auto dot = [&](const Tensor& M) {
      double sum = 0;
      for (std::size_t k = 0; k < M.shape[0]; ++k) sum += x.data[i * x.shape[1] + k] * M.at({k, j});
      return sum;
    };
    const double z = dot(W) + (bias.data.empty() ? 0.0 : bias.data[j]);
    const std::string index = fmt::format("{}[{}][{}]", c.item(e.tensor, b), i, j);
    const FeedForwardWeights* ffn = c.ffn_weights(e.id);
    if (gated(c.model.config.activation) && ffn) {
      // the up projection's element too, then SiLU(a) · u (GeGLU: GELU_tanh(a) · u)
      text += worked_projection_cell(x, ffn->W_3, Tensor(), i, j, "u" + c.item(e.tensor, b),
                                     display_name(input->id) + c.item(input->tensor, b), "W_3", "", c.worked_options());
      text += c.model.config.activation == Activation::SwiGLU
                  ? worked_swiglu(z, dot(ffn->W_3), "hidden" + index, "a" + index, "u" + index, c.worked_options())
                  : worked_geglu(z, dot(ffn->W_3), "hidden" + index, "a" + index, "u" + index, c.worked_options());
    } else {
      text += worked_activation(z, c.model.config.activation, "hidden" + index, "z" + index, c.worked_options());
    }
  }
  c.page.worked(text);
}

}  // namespace

void print_residual(const TraceEntry& e, PrintContext& c) {
  const std::string name = display_name(e.id);
  // a parallel residual's first sum adds the two sub-layers' outputs, its second the input
  const bool parallel = c.model.config.parallel_residual, both = parallel && e.id.number == 1;
  print_step_text(e, c,
                  {page_of(e.id.kind),
                   both ? std::string("The two sub-layers' outputs added (parallel residual)")
                        : fmt::format("Residual connection around the {}", sublayer_of(e.id, c.model)),
                   parallel ? "parallel_residual" : explanation_of(e.id.kind),
                   fmt::format("{} = {} + {}   ({})", name, c.operand_name(e, 0), c.operand_name(e, 1),
                               both       ? "attention's and the feed-forward's outputs, side by side"
                               : parallel ? "their sum added to the layer's input"
                                          : "the sub-layer's output added to its input"),
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
  const bool rms = root_mean_square(c.model.config.norm), plus_one = c.model.config.norm == Norm::RMSNormPlusOne;
  // the norms of the embeddings and of the head's transform have their own "why", outside the layers
  const bool own_why = is_embedding_or_head_norm(e.id.kind);
  if (own_why) c.page.leave_layer();
  c.page.begin_step(page_of(e.id.kind), norm_title(e.id, c.model),
                    own_why    ? explanation_of(e.id.kind)
                    : plus_one ? "rms_norm_plus_one"
                    : rms      ? "rms_norm"
                               : "layer_norm",
                    e.id.kind == StepKind::FinalNorm           ? "final_norm"
                    : e.id.kind == StepKind::EmbeddingNorm     ? "embedding_norm"
                    : e.id.kind == StepKind::HeadTransformNorm ? "transform_norm"
                                                               : "norm");
  c.page.formula(
      rms ? fmt::format("{} = RMSNorm({})   (each row x: x / √(mean(x²) + eps) · {}, eps = {})", display_name(e.id),
                        c.operand_name(e, 0), plus_one ? "(1 + gamma)" : "gamma",
                        eps_text(c.model.config.layer_norm_eps))
          : fmt::format("{} = LayerNorm({})   (each row x: (x - mean) / √(var + eps) · gamma + beta, eps = {})",
                        display_name(e.id), c.operand_name(e, 0), eps_text(c.model.config.layer_norm_eps)));
  c.page.shapes(shape_with_axes(t) + " -> " + shape_with_axes(t));
  const NormWeights* norm = c.norm_weights(e.id);
  if (norm && rms) c.page.weights({{"gamma", &norm->gamma}});
  if (norm && !rms) c.page.weights({{"gamma", &norm->gamma}, {"beta", &norm->beta}});
  c.page.tensor(display_name(e.id), t);
  const TraceEntry* input = c.operand_entry(e, 0);
  if (!norm || !input) return;
  const std::size_t b = std::min(c.cell_batch(), batch_count(input->tensor) - 1), row = c.cell_row();
  const Tensor x = batch_item(input->tensor, b);
  const std::string row_name = fmt::format("{}{}[{}]", display_name(input->id), c.item(input->tensor, b), row);
  if (row < x.shape[0] && plus_one)
    c.page.worked(worked_rms_norm_plus_one_row(row_of(x, row), to_vector(norm->gamma.data),
                                               c.model.config.layer_norm_eps, row_name, c.worked_options()));
  else if (row < x.shape[0] && rms)
    c.page.worked(worked_rms_norm_row(row_of(x, row), to_vector(norm->gamma.data), c.model.config.layer_norm_eps,
                                      row_name, c.worked_options()));
  else if (row < x.shape[0])
    c.page.worked(worked_layer_norm_row(row_of(x, row), to_vector(norm->gamma.data), to_vector(norm->beta.data),
                                        c.model.config.layer_norm_eps, row_name, c.worked_options()));
}

namespace {

// One layer of the feed-forward network: x · W + b (then the activation, for the first).
void print_ffn_layer(const TraceEntry& e, PrintContext& c, bool first) {
  const FeedForwardWeights* w = c.ffn_weights(e.id);
  const Tensor* W = w ? (first ? &w->W_1 : &w->W_2) : nullptr;
  const Tensor* b = w ? (first ? &w->b_1 : &w->b_2) : nullptr;
  const std::string n = first ? "1" : "2", bias = b && !b->data.empty() ? " + b_" + n : "";
  const Activation act = c.model.config.activation;
  const bool swiglu = gated(act), geglu = act == Activation::GeGLUTanh;
  const char* name = act == Activation::ReLU       ? "ReLU"
                     : act == Activation::GELUTanh ? "GELU_tanh"
                     : act == Activation::SiLU     ? "SiLU"
                                                   : "GELU";
  const char* definition = act == Activation::ReLU       ? "max(0, v)"
                           : act == Activation::GELUTanh ? "0.5 · v · (1 + tanh(√(2/π) · (v + 0.044715 · v³)))"
                           : act == Activation::SiLU     ? "v · σ(v) = v / (1 + e^-v)"
                                                         : "v · Φ(v)";
  c.page.begin_step(page_of(e.id.kind), first ? "Feed-forward, first layer" : "Feed-forward, second layer",
                    geglu                     ? "geglu"
                    : swiglu                  ? "swiglu"
                    : act == Activation::SiLU ? "silu"
                                              : "feed_forward",
                    first ? "ffn_hidden" : "ffn_output");
  c.page.formula(!first  ? fmt::format("ffn = hidden · W_2{}   (back to d_model columns)", bias)
                 : geglu ? fmt::format("hidden = GELU_tanh(a) ⊙ u, a = {0} · W_1 (the gate), u = {0} · W_3 (the up "
                                       "projection)   (GELU_tanh(v) = 0.5 · v · (1 + tanh(√(2/π) · (v + 0.044715 · "
                                       "v³))))",
                                       c.operand_name(e, 0))
                 : swiglu ? fmt::format("hidden = SiLU(a) ⊙ u, a = {0} · W_1 (the gate), u = {0} · W_3 (the up "
                                        "projection)   (SiLU(v) = v · σ(v) = v / (1 + e^-v))",
                                        c.operand_name(e, 0))
                          : fmt::format("hidden = {0}(z), z = {1} · W_1{2}   ({0}(v) = {3})", name,
                                        c.operand_name(e, 0), bias, definition));
  c.page.shapes(swiglu && first ? equation({e.operands[0], e.operands[1]}, "@", e.tensor) + " (and the same with W_3)"
                                : equation(e.operands, "@", e.tensor));
  if (w) {
    c.page.weight("W_" + n, *W);
    if (swiglu && first) c.page.weight("W_3", w->W_3);
    c.page.weight("b_" + n, *b);
    work_ffn_cell(e, *W, *b, first ? (swiglu ? "a" : "z") : "ffn", "W_" + n, "b_" + n, c);
  }
  c.page.tensor(display_name(e.id), e.tensor);
}

}  // namespace

void print_ffn_hidden(const TraceEntry& e, PrintContext& c) { print_ffn_layer(e, c, true); }

void print_ffn_output(const TraceEntry& e, PrintContext& c) { print_ffn_layer(e, c, false); }

void print_layer_output(const TraceEntry& e, PrintContext& c) {
  const bool encoder = e.id.stack == Stack::Encoder;
  const bool decoder_only = is_decoder_only(c.model);
  c.page.begin_step(page_of(e.id.kind),
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

namespace {

// The norm's title, backward: a stack's final norm, the embeddings' or the head transform's
// (BERT's, outside the layers), a stack's input's (BART's), or a layer's.
std::string norm_backward_title(const StepId& id, const char* norm) {
  if (id.kind == StepKind::FinalNorm) return fmt::format("Final {}", norm);
  if (id.kind == StepKind::EmbeddingNorm && id.stack != Stack::None)
    return fmt::format("{} of the {}'s input", norm, id.sequence == Sequence::Target ? "decoder" : "encoder");
  if (id.kind == StepKind::EmbeddingNorm) return fmt::format("{} of the embeddings", norm);
  if (id.kind == StepKind::HeadTransformNorm) return fmt::format("{} of the head's transform", norm);
  return norm;
}

}  // namespace

void print_norm_backward(const TraceEntry& e, PrintContext& c) {
  // the embeddings' norm comes after the first layer's backward: outside its section
  if (is_embedding_or_head_norm(e.id.kind)) c.page.leave_layer();
  if (root_mean_square(c.model.config.norm)) {
    const bool plus_one = c.model.config.norm == Norm::RMSNormPlusOne;
    print_backward_text(e, c,
                        {page_of(e.id.kind),
                         norm_backward_title(e.id, "RMSNorm"),
                         {fmt::format("dL/dx = r · (g - x̂ · mean(g ⊙ x̂)), per position   (r = 1 / sqrt(mean(x²) + "
                                      "eps), x̂ = x · r, g = dL/dRMS ⊙ {}: r depends on every x of the row)",
                                      plus_one ? "(1 + gamma)" : "gamma"),
                          "dL/dgamma = Σ dL/dRMS ⊙ x̂, summed over every position (no beta)"},
                         "dL/dRMS"});
    print_weight_gradients(e, c, WeightKind::Gamma, e.id.number);
    return;
  }
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       norm_backward_title(e.id, "LayerNorm"),
                       {"dL/dx = (g - mean(g) - x̂ · mean(g ⊙ x̂)) / σ, per position   (x̂ = (x - mean) / σ, "
                        "σ = sqrt(var + eps), g = dL/dLN ⊙ gamma: the mean and σ depend on every x of the row)",
                        "dL/dgamma = Σ dL/dLN ⊙ x̂,  dL/dbeta = Σ dL/dLN, summed over every position"},
                       "dL/dLN"});
  print_weight_gradients(e, c, WeightKind::Gamma, e.id.number);
  print_weight_gradients(e, c, WeightKind::Beta, e.id.number);
}

}  // namespace attn
