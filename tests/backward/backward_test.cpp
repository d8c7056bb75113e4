// The backward pass against central differences on small models: every weight's gradient
// (and the input's, when the input is numbers) is the change of the loss when that number
// moves, measured directly: (L(w + h) - L(w - h)) / 2h for every element of every weight.
#include "attn/backward.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "trace_lookup.h"

#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/parameters.h"

namespace {

const char* kEncoderDecoderTied = R"({
  "model": {"d_model": 4, "num_heads": 2, "d_ff": 6, "seed": 1},
  "vocab": ["<PAD>", "<UNK>", "<BOS>", "a", "b", "c"], "embedding": "randn",
  "input": {"tokens": [["a", "b", "c"], ["b"]], "target_tokens": [["<BOS>", "a"], ["<BOS>", "c", "b"]],
            "labels": [["a", "<PAD>"], ["c", "b", "a"]]},
  "encoder": "randn", "decoder": "randn", "output": "tied"
})";

// Pre-norm, GELU, learned and scaled embeddings, biases everywhere, final norms, two layers.
const char* kPreNormEverything = R"({
  "model": {"d_model": 4, "num_heads": 2, "d_ff": 5, "seed": 2, "norm_first": true, "activation": "gelu",
            "positional_encoding": "learned", "max_len": 5, "scale_embeddings": true, "num_layers": 2,
            "layer_norm_eps": 0.001},
  "vocab": ["<PAD>", "<UNK>", "<BOS>", "a", "b", "c"], "embedding": "randn", "positions": "randn",
  "input": {"text": "a b c", "target_text": "<BOS> a", "labels": "a <UNK>"},
  "encoder": {"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn",
                            "b_q": "randn", "b_k": "randn", "b_v": "randn", "b_o": "randn"},
              "norm1": {"gamma": "randn", "beta": "randn"},
              "ffn": {"W_1": "randn", "b_1": "randn", "W_2": "randn", "b_2": "randn"},
              "norm2": {"gamma": "randn", "beta": "randn"}},
  "encoder_norm": {"gamma": "randn", "beta": "randn"},
  "decoder": {"self_attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn", "b_o": "randn"},
              "cross_attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn", "b_k": "randn"},
              "norm1": {"gamma": "randn"}, "norm3": {"beta": "randn"},
              "ffn": {"W_1": "randn", "b_1": "randn", "W_2": "randn"}},
  "decoder_norm": {"gamma": "randn", "beta": "randn"},
  "output": {"W": "randn", "b": "randn"}
})";

// Numbers in, numbers out: causal, per-head weights with d_head 3 (not d_model / H = 2),
// biases, a last layer without W_o.
const char* kAttentionOnlyPerHead = R"({
  "model": {"d_model": 4, "num_heads": 2, "d_head": 3, "causal": true, "seed": 3},
  "input": {"X": {"randn": [2, 3, 4]}, "output_grad": "randn"},
  "encoder": [{"attention": {"heads": [{"W_q": "randn", "W_k": "randn", "W_v": "randn"},
                                       {"W_q": "randn", "W_k": "randn", "W_v": "randn"}],
                             "W_o": "randn", "b_q": "randn", "b_o": "randn"}},
              {"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "b_v": "randn"}}]
})";

// A padded batch whose first sentence starts with <PAD>: under the causal mask its first
// query sees no key at all (a fully masked row, zero weights).
const char* kPaddingFullyMasked = R"({
  "model": {"d_model": 4, "num_heads": 2, "causal": true, "seed": 4},
  "vocab": ["<PAD>", "<UNK>", "a", "b", "c"], "embedding": "randn",
  "input": {"tokens": [["<PAD>", "a", "b"], ["c"]], "output_grad": "randn"},
  "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn", "b_o": "randn"}}]
})";

// RMSNorm everywhere (no beta), pre-norm, a final norm, a causal stack with an output head.
const char* kRmsNorm = R"({
  "model": {"d_model": 4, "num_heads": 2, "d_ff": 5, "seed": 5, "norm": "rmsnorm", "norm_first": true,
            "causal": true, "num_layers": 2, "layer_norm_eps": 1e-6},
  "vocab": ["<PAD>", "<UNK>", "<BOS>", "a", "b", "c"], "embedding": "randn",
  "input": {"text": "a b c b", "labels": "b c b a"},
  "encoder": {"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn"},
              "norm1": {"gamma": "randn"}, "ffn": {"W_1": "randn", "W_2": "randn"}, "norm2": {"gamma": "randn"}},
  "encoder_norm": {"gamma": "randn"},
  "output": "tied"
})";

// GPT-2's tanh GELU in one layer, Llama's SwiGLU (W_3) in a post-norm stack of two.
const char* kGeluTanh = R"({
  "model": {"d_model": 4, "num_heads": 2, "d_ff": 6, "seed": 6, "activation": "gelu_tanh", "norm_first": true},
  "input": {"X": {"randn": [2, 3, 4]}, "output_grad": "randn"},
  "encoder": {"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn"},
              "ffn": {"W_1": "randn", "b_1": "randn", "W_2": "randn", "b_2": "randn"}}
})";
const char* kSwiglu = R"({
  "model": {"d_model": 4, "num_heads": 2, "d_ff": 6, "seed": 7, "activation": "swiglu", "num_layers": 2},
  "input": {"X": {"randn": [2, 3, 4]}, "output_grad": "randn"},
  "encoder": "randn"
})";

// RoPE in an encoder-decoder: both self-attentions turn their queries and keys (not the
// cross-attention); the tokens carry no added positions.
const char* kRope = R"({
  "model": {"d_model": 4, "num_heads": 2, "d_ff": 5, "seed": 8, "positional_encoding": "rope", "rope_theta": 50,
            "causal": true},
  "vocab": ["<PAD>", "<UNK>", "<BOS>", "a", "b", "c"], "embedding": "randn",
  "input": {"tokens": [["a", "b", "c"], ["b", "a", "a"]], "target_tokens": [["<BOS>", "a"], ["<BOS>", "c"]],
            "labels": [["a", "b"], ["c", "a"]]},
  "encoder": "randn", "decoder": "randn", "output": {"W": "randn"}
})";

// Grouped-query attention (4 query heads, 2 key/value heads, biases on the keys and values)
// with a sliding window of 2 in a causal stack; and the Llama-style block, every variant at
// once: RMSNorm, RoPE, multi-query attention, SwiGLU, a window, a final norm, a tied head.
const char* kGroupedWindow = R"({
  "model": {"d_model": 8, "num_heads": 4, "num_kv_heads": 2, "d_ff": 5, "seed": 9, "causal": true,
            "sliding_window": 2, "norm_first": true},
  "input": {"X": {"randn": [2, 4, 8]}, "output_grad": "randn"},
  "encoder": {"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn",
                            "b_k": "randn", "b_v": "randn"},
              "ffn": {"W_1": "randn", "W_2": "randn"}}
})";
const char* kLlama = R"({
  "model": {"d_model": 4, "num_heads": 2, "num_kv_heads": 1, "d_ff": 6, "seed": 10, "causal": true,
            "sliding_window": 2, "norm": "rmsnorm", "norm_first": true, "activation": "swiglu",
            "positional_encoding": "rope", "num_layers": 2},
  "vocab": ["<PAD>", "<UNK>", "<BOS>", "a", "b", "c"], "embedding": "randn",
  "input": {"tokens": [["<BOS>", "a", "b", "c"], ["<BOS>", "c", "a", "a"]], "labels": [["a", "b", "c", "a"], ["c", "a", "a", "b"]]},
  "encoder": "randn", "encoder_norm": {"gamma": "randn"}, "output": "tied"
})";

double loss_of(attn::LoadedModel& run) {
  attn::fuse_head_weights(run.model);
  attn::Trace trace(!run.input.batched);
  attn::run_model(run.model, run.input, trace);
  return attn::run_backward(run.model, run.input, trace);
}

// The loss with t[i] moved by `step`.
double loss_moved(attn::LoadedModel& model, attn::Tensor& t, std::size_t i, double step) {
  const double keep = t.data[i];
  t.data[i] = keep + step;
  const double loss = loss_of(model);
  t.data[i] = keep;
  return loss;
}

// max |numeric - analytic| over max |numeric| (or 1) for the tensor `t` of `model`. The
// five-point central difference, (8 (L(+h) - L(-h)) - (L(+2h) - L(-2h))) / 12h, whose error
// is O(h⁴): attention's softmax has large higher derivatives where the scores are large.
double central_difference_error(attn::LoadedModel& model, attn::Tensor& t, const attn::Tensor& analytic) {
  const double h = 1e-4;
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double near = loss_moved(model, t, i, h) - loss_moved(model, t, i, -h);
    const double far = loss_moved(model, t, i, 2 * h) - loss_moved(model, t, i, -2 * h);
    const double numeric = (8 * near - far) / (12 * h);
    worst = std::max(worst, std::fabs(numeric - analytic.data.at(i)));
    scale = std::max(scale, std::fabs(numeric));
  }
  return worst / std::max(scale, 1.0);
}

void check_every_weight(const char* text, const std::string& name, const attn::Ablation& ablation = {}) {
  attn::LoadedModel model = attn::load_model_text(text, name);
  model.input.ablation = ablation;  // --ablate: every run below, forward and backward, ablates
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  const double loss = attn::run_backward(model.model, model.input, trace);
  CHECK(std::isfinite(loss));
  std::size_t checked = 0;
  double worst = 0;
  for (const attn::Parameter& p : attn::parameters(model.model)) {
    const std::string grad_name = "grad." + attn::parameter_name(p.id);
    INFO(grad_name);
    const attn::TraceEntry* g = find_entry(trace, grad_name);
    REQUIRE(g != nullptr);
    REQUIRE(g->tensor.shape == p.tensor->shape);
    const double error = central_difference_error(model, *p.tensor, g->tensor);
    CHECK(error < 1e-7);
    worst = std::max(worst, error);
    ++checked;
  }
  if (!model.input.X.data.empty()) {
    INFO("grad.input");
    const attn::TraceEntry* g = find_entry(trace, "grad.input");
    REQUIRE(g != nullptr);
    CHECK(central_difference_error(model, model.input.X, g->tensor) < 1e-7);
  }
  // The figures, for a report: ATTN_TEST_REPORT=1 build/tests/attn_tests "[central]"
  if (std::getenv("ATTN_TEST_REPORT"))
    WARN(fmt::format("{}: {} weights, worst central-difference error {:.2e}", name, checked, worst));
  CHECK(checked == attn::parameters(model.model).size());
}

}  // namespace

TEST_CASE("central differences: an encoder-decoder with a tied head and <PAD> labels", "[backward][central]") {
  check_every_weight(kEncoderDecoderTied, "encoder_decoder_tied");
}

TEST_CASE("central differences: pre-norm, GELU, learned scaled positions, biases, final norms", "[backward][central]") {
  check_every_weight(kPreNormEverything, "pre_norm_everything");
}

TEST_CASE("central differences: attention only, per-head weights, d_head 3, output_grad", "[backward][central]") {
  check_every_weight(kAttentionOnlyPerHead, "attention_only_per_head");
}

TEST_CASE("central differences: padding with a fully masked row", "[backward][central]") {
  check_every_weight(kPaddingFullyMasked, "padding_fully_masked");
}

TEST_CASE("central differences: RMSNorm, pre-norm, a final norm, causal, tied head", "[backward][central]") {
  check_every_weight(kRmsNorm, "rms_norm");
}

TEST_CASE("central differences: gelu_tanh, and SwiGLU's gate and up projections", "[backward][central]") {
  check_every_weight(kGeluTanh, "gelu_tanh");
  check_every_weight(kSwiglu, "swiglu");
}

TEST_CASE("central differences: RoPE in both self-attentions of an encoder-decoder", "[backward][central]") {
  check_every_weight(kRope, "rope");
}

TEST_CASE("central differences: grouped-query attention with a sliding window", "[backward][central]") {
  check_every_weight(kGroupedWindow, "grouped_window");
}

TEST_CASE("central differences: a Llama-style stack, every variant at once", "[backward][central]") {
  check_every_weight(kLlama, "llama");
}

TEST_CASE("central differences: ablated heads, zeroed and set to their mean, in a Llama-style stack",
          "[backward][central][ablation]") {
  // kLlama's one stack is a causal encoder: layer 0's head 1, then both of layer 1's
  attn::Ablation zeroed;
  zeroed.heads = {{attn::Stack::Encoder, 0, 1}, {attn::Stack::Encoder, 1, 0}, {attn::Stack::Encoder, 1, 1}};
  check_every_weight(kLlama, "llama_ablated_zero", zeroed);
  attn::Ablation mean = zeroed;
  mean.mean = true;
  check_every_weight(kLlama, "llama_ablated_mean", mean);
}
