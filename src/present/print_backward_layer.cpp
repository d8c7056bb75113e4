// The rest of a layer backward: residual connections, the feed-forward network, the
// layer's output (the norms' backward is beside their forward, in print_layer.cpp).
#include <fmt/format.h>

#include "present/page.h"
#include "present/step_printers.h"

namespace attn {

void print_residual_backward(const TraceEntry& e, PrintContext& c) {
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       "Add (residual connection)",
                       {"r = x + Sublayer(x):  dL/dx = dL/dSublayer(x) = dL/dr, unchanged",
                        "(x's gradient gets the sub-layer's own share added once the sub-layer's backward is done)"},
                       "dL/dr"});
}

// Whether the layer's feed-forward network has the bias b_1 (or b_2): the formulas name it
// only then, as the forward shows "+ b_1" only then.
static bool ffn_has_bias(const TraceEntry& e, PrintContext& c, bool first) {
  const FeedForwardWeights* w = c.ffn_weights(e.id);
  return w && (first ? w->b_1 : w->b_2).has_values();
}

void print_ffn_output_backward(const TraceEntry& e, PrintContext& c) {
  print_backward_text(e, c,
                      {page_of(e.id.kind),
                       "Feed-forward, second layer",
                       {ffn_has_bias(e, c, false)
                            ? "dL/dhidden = dL/dffn · W_2ᵀ,  dL/dW_2 = hiddenᵀ · dL/dffn,  dL/db_2 = Σ dL/dffn over "
                              "every position"
                            : "dL/dhidden = dL/dffn · W_2ᵀ,  dL/dW_2 = hiddenᵀ · dL/dffn, summed over every position"},
                       "dL/dffn"});
  print_weight_gradients(e, c, WeightKind::W_2);
  print_weight_gradients(e, c, WeightKind::b_2);
}

void print_ffn_hidden_backward(const TraceEntry& e, PrintContext& c) {
  const Activation act = c.model.config.activation;
  if (act == Activation::GeGLUTanh) {
    print_backward_text(e, c,
                        {page_of(e.id.kind),
                         "Feed-forward, first layer (GeGLU)",
                         {"a = x · W_1, u = x · W_3, hidden = GELU_tanh(a) ⊙ u:  dL/du = dL/dhidden ⊙ GELU_tanh(a),  "
                          "dL/da = dL/dhidden ⊙ u ⊙ (0.5·(1 + t) + 0.5·a·(1 - t²)·√(2/π)·(1 + 3·0.044715·a²)), t = "
                          "tanh(√(2/π)·(a + 0.044715·a³))",
                          "dL/dx = dL/da · W_1ᵀ + dL/du · W_3ᵀ,  dL/dW_1 = xᵀ · dL/da,  dL/dW_3 = xᵀ · dL/du"},
                         "dL/dhidden"});
    print_weight_gradients(e, c, WeightKind::W_1);
    print_weight_gradients(e, c, WeightKind::W_3);
    return;
  }
  if (act == Activation::SwiGLU) {
    print_backward_text(e, c,
                        {page_of(e.id.kind),
                         "Feed-forward, first layer (SwiGLU)",
                         {"a = x · W_1, u = x · W_3, hidden = SiLU(a) ⊙ u:  dL/du = dL/dhidden ⊙ SiLU(a),  dL/da = "
                          "dL/dhidden ⊙ u ⊙ σ(a)·(1 + a·(1 - σ(a)))",
                          "dL/dx = dL/da · W_1ᵀ + dL/du · W_3ᵀ,  dL/dW_1 = xᵀ · dL/da,  dL/dW_3 = xᵀ · dL/du"},
                         "dL/dhidden"});
    print_weight_gradients(e, c, WeightKind::W_1);
    print_weight_gradients(e, c, WeightKind::W_3);
    return;
  }
  const bool relu = act == Activation::ReLU, bias = ffn_has_bias(e, c, true);
  const std::string a = bias ? "a = x · W_1 + b_1, " : "a = x · W_1, ";
  print_backward_text(
      e, c,
      {page_of(e.id.kind),
       "Feed-forward, first layer",
       {a + (relu ? "hidden = ReLU(a):  dL/da = dL/dhidden where a > 0, else 0 (0 at a = 0 exactly, as PyTorch)"
             : act == Activation::SiLU ? "hidden = SiLU(a):  dL/da = dL/dhidden ⊙ σ(a)·(1 + a·(1 - σ(a)))"
             : act == Activation::GELUTanh
                 ? "hidden = GELU_tanh(a):  dL/da = dL/dhidden ⊙ (0.5·(1 + t) + 0.5·a·(1 - t²)·√(2/π)·(1 + "
                   "3·0.044715·a²)), t = tanh(√(2/π)·(a + 0.044715·a³))"
                 : "hidden = GELU(a):  dL/da = dL/dhidden ⊙ (Φ(a) + a·φ(a)), φ the normal density"),
        bias ? "dL/dx = dL/da · W_1ᵀ,  dL/dW_1 = xᵀ · dL/da,  dL/db_1 = Σ dL/da over every position"
             : "dL/dx = dL/da · W_1ᵀ,  dL/dW_1 = xᵀ · dL/da, summed over every position"},
       "dL/dhidden"});
  print_weight_gradients(e, c, WeightKind::W_1);
  print_weight_gradients(e, c, WeightKind::b_1);
}

void print_layer_output_backward(const TraceEntry& e, PrintContext& c) {
  const bool encoder = e.id.stack == Stack::Encoder;
  const char* stack = is_decoder_only(c.model) ? "Decoder-only" : encoder ? "Encoder" : "Decoder";
  c.page.begin_step(page_of(e.id.kind), fmt::format("{} layer output, backward", stack), "", "backward.layer_output");
  c.page.formula(encoder && c.model.has_target()
                     ? "dL/d(layer output): what the layer above sent back, or for the last layer the sum of every "
                       "decoder layer's cross-attention (keys and values) through the final norm"
                     : "dL/d(layer output): what the layer above, the final norm or the output head sent back");
  c.page.shapes(shape_with_axes(e.tensor));
  c.page.tensor("dL/doutput", e.tensor);
}

}  // namespace attn
