#include "attn/walkthrough.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/backward.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "model/default_model.h"
#include "model/examples.h"
#include "present/terminal.h"
#include "present/worked_arithmetic.h"
#include "trace_lookup.h"

namespace {
std::string walkthrough_of(const std::string& path) {
  const attn::LoadedModel model = attn::load_model_file(std::string(ATTN_SOURCE_DIR) + path);
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  std::ostringstream out;
  attn::print_walkthrough(out, trace, model.model, model.input, attn::WalkthroughOptions{});
  return out.str();
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}
}  // namespace

TEST_CASE("seed 000 walkthrough: steps, formulas, shape equations and values", "[walkthrough][seed000]") {
  const std::string text = walkthrough_of("/data/examples/seed000_batched_mha.json");
  INFO(text);
  // numbered steps in order
  const char* titles[] = {"Step 1: Input X",
                          "Step 2: Query projection",
                          "Step 3: Key projection",
                          "Step 4: Value projection",
                          "Step 5: Split Q into 2 heads",
                          "Step 8: Transpose K",
                          "Step 9: Raw scores",
                          "Step 10: Scale",
                          "Step 11: Softmax",
                          "Step 12: Context",
                          "Step 13: Merge heads",
                          "Step 14: Output projection (skipped)"};
  std::size_t pos = 0;
  for (const char* t : titles) {
    const std::size_t found = text.find(t, pos);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) pos = found;
  }
  // the shape equation of the raw scores, with named axes on both sides
  CHECK(contains(text, "(B=2,H=2,S=6,d=2) @ (B=2,H=2,d=2,S=6) -> (B=2,H=2,S=6,S=6)"));
  CHECK(contains(text, "(B=2,S=6,N=4) @ (N=4,H*d=4) -> (B=2,S=6,H*d=4)"));
  CHECK(contains(text, "1. reshape: (B=2,S=6,H*d=4) -> (B=2,S=6,H=2,d=2)"));
  CHECK(contains(text, "scaled = scores / √2   (√d = 1.4142)"));
  // Q_total's first row as NumPy prints it with precision 4
  CHECK(contains(text, "Q = [[[-1.5806  0.1079 -2.348   1.6944]"));
  // row sums of the softmax are checked: 24 rows (B=2,H=2,S=6), each 1 up to rounding
  CHECK(contains(text, "every row sums to 1 (row sums: 24 of them, at most "));
  CHECK(contains(text, "this block has no W_o: its output is the concatenation (B=2,S=6,H*d=4)"));
}

TEST_CASE("seed 002 walkthrough shows the heads side by side as slices of the fused matrix", "[walkthrough][seed002]") {
  const std::string text = walkthrough_of("/data/examples/seed002_identity_heads.json");
  INFO(text);
  CHECK(contains(text, "the file gives one W_q per head; side by side, the fused W_q (N=4,H*d=4):"));
  CHECK(contains(text, "W_q^(0)     W_q^(1)"));
  CHECK(contains(text, "W_q[:, 2:4] == W_q^(1)"));
  // unbatched input prints unbatched shapes
  CHECK(contains(text, "(H=2,S=4,d=2) @ (H=2,d=2,S=4) -> (H=2,S=4,S=4)"));
  CHECK(contains(text, "Step 14: Output projection"));
}

TEST_CASE("the untrained example walks the whole pipeline for \"I love AI\"", "[walkthrough][default]") {
  // The built-in model before the trained translator: seed 004's round numbers, by hand.
  attn::LoadedModel model =
      attn::load_model_text(attn::find_example("untrained_i_love_ai").json, "untrained_i_love_ai");
  attn::replace_source_text(model.model, model.input, "I love AI", "text");
  attn::replace_target_text(model.model, model.input, "J' aime l' IA", "--target");
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  std::ostringstream out;
  attn::print_walkthrough(out, trace, model.model, model.input, attn::WalkthroughOptions{});
  const std::string text = out.str();
  INFO(text);
  CHECK(contains(text, "\"I\"→2  \"love\"→3  \"AI\"→4"));
  CHECK(contains(text, "E[3] (\"love\") = [0.5 0.1 0.8 0.2]"));
  // love + PE(1), NumPy's 4 digits: [1.3415 0.6403 0.81 1.2]
  CHECK(contains(text, " [1.3415 0.6403 0.81   1.2   ]"));
  CHECK(contains(text, "Sinusoidal positional encoding"));
  // PE(1, 2) worked out as seed 004 does it
  CHECK(contains(text, "divisor  = 10000^(2i/d_model) = 10000^(2×1/4) = 10000^0.5 = 100"));
  CHECK(contains(text, "angle    = pos / divisor = 1 / 100 = 0.01"));
  // the teaching views: the vocabulary-sized E as the rows looked up, an explanation, a heatmap
  CHECK(contains(text, "  (E: V=335 rows; the 3 looked up follow; --full prints E whole)"));
  CHECK(contains(text, "  │ Each score is a query's dot product with a key"));
  CHECK(contains(text, "heatmap: rows are queries, columns keys"));
  CHECK(contains(text, "══ Encoder layer 0 of 1 (post-norm: LayerNorm(x + f(x))) ══"));
  CHECK(contains(text, "Norm (LayerNorm of the residual sum)"));
  CHECK(contains(text, "Feed-forward, first layer"));
  CHECK(contains(text, "\"J'\"→"));
  CHECK(contains(text, "Decoder self-attention mask (causal)"));
  CHECK(contains(text, "── Cross-attention to the encoder's output, H=2 heads of d=2 ──"));
  // the decoder's steps repeat the encoder's kinds: one line each
  CHECK(contains(text, "K = encoder.0.output · W_k -> (S=3,H*d=4)   (as step 6)"));
  CHECK(contains(text, "Softmax over the vocabulary"));
  CHECK(contains(text, "greedy pick (the most probable at each position): "));
}

namespace {
// The walkthrough of `model` printed while it runs (as attn explain does) and the trace
// left afterwards.
std::string streamed_walkthrough_of(const attn::LoadedModel& model, const attn::WalkthroughOptions& options,
                                    std::vector<std::string>* left_in_trace = nullptr) {
  attn::Trace trace(!model.input.batched);
  std::ostringstream out;
  attn::StreamingWalkthrough printer(out, trace, model.model, model.input, options, true);
  trace.set_entry_observer([&](const attn::TraceEntry& e) { printer.add(e); });
  attn::run_model(model.model, model.input, trace);
  printer.finish();
  if (left_in_trace)
    for (const auto& e : trace.entries()) left_in_trace->push_back(e.name);
  return out.str();
}

std::string kept_walkthrough_of(const attn::LoadedModel& model, const attn::WalkthroughOptions& options) {
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  std::ostringstream out;
  attn::print_walkthrough(out, trace, model.model, model.input, options);
  return out.str();
}
}  // namespace

TEST_CASE("the walkthrough printed while the model runs is the walkthrough of the finished run",
          "[walkthrough][stream]") {
  attn::WalkthroughOptions options;
  for (const auto& example : attn::bundled_examples()) {
    INFO(example.name);
    const attn::LoadedModel model = attn::load_model_text(example.json, example.name);
    CHECK(streamed_walkthrough_of(model, options) == kept_walkthrough_of(model, options));
  }
  const attn::LoadedModel builtin = attn::load_model_text(attn::default_model_json(), "built-in");
  CHECK(streamed_walkthrough_of(builtin, options) == kept_walkthrough_of(builtin, options));
  // Several layers of encoder and decoder, post-norm and pre-norm, where a layer's first
  // steps read the layer before and the decoder's cross-attention reads the encoder.
  for (const char* norm_first : {"false", "true"}) {
    INFO("norm_first " << norm_first);
    const attn::LoadedModel model = attn::load_model_text(
        std::string(R"({"model": {"d_model": 4, "num_heads": 2, "d_ff": 8, "num_layers": 3, "norm_first": )") +
            norm_first + R"(},
            "input": {"X": {"randn": [2, 3, 4]}, "target_X": {"randn": [2, 2, 4]}},
            "encoder": "randn", "decoder": "randn"})",
        "layers.json");
    CHECK(streamed_walkthrough_of(model, options) == kept_walkthrough_of(model, options));
  }
}

TEST_CASE("a streamed walkthrough keeps the current layer and the results of the layer before only",
          "[walkthrough][stream]") {
  const attn::LoadedModel model = attn::load_model_text(
      R"({"model": {"d_model": 4, "num_heads": 2, "d_ff": 8, "num_layers": 3},
          "input": {"X": {"randn": [3, 4]}}, "encoder": "randn"})",
      "layers.json");
  std::vector<std::string> left;
  streamed_walkthrough_of(model, attn::WalkthroughOptions{}, &left);
  const auto kept = [&](const std::string& name) { return std::find(left.begin(), left.end(), name) != left.end(); };
  CHECK(kept("input"));
  CHECK_FALSE(kept("encoder.0.output"));  // two layers back: nothing reads it again
  CHECK_FALSE(kept("encoder.0.attention.output"));
  CHECK(kept("encoder.1.output"));  // the last layer's input
  CHECK(kept("encoder.1.attention.output"));
  CHECK_FALSE(kept("encoder.1.attention.weights"));
  CHECK_FALSE(kept("encoder.1.ffn.hidden"));
  CHECK(kept("encoder.2.attention.scores"));
  CHECK(kept("encoder.2.ffn.hidden"));
}

TEST_CASE("a streamed walkthrough of a deep model holds no more entries than a shallow one", "[walkthrough][stream]") {
  // Each layer's entries are dropped two layers later: the trace does not grow with depth
  // (it did, and a walkthrough of 16,000 layers took time quadratic in the depth).
  std::vector<std::size_t> sizes;
  for (int layers : {3, 60}) {
    const attn::LoadedModel model = attn::load_model_text(
        R"({"model": {"d_model": 4, "num_heads": 2, "d_ff": 8, "num_layers": )" + std::to_string(layers) + R"(},
            "input": {"X": {"randn": [3, 4]}}, "encoder": "randn"})",
        "layers.json");
    std::vector<std::string> left;
    streamed_walkthrough_of(model, attn::WalkthroughOptions{}, &left);
    sizes.push_back(left.size());
  }
  CHECK(sizes[0] == sizes[1]);
}

TEST_CASE("a streamed walkthrough refuses a --head the model does not have before printing", "[walkthrough][stream]") {
  const attn::LoadedModel model = attn::load_model_text(attn::default_model_json(), "built-in");
  attn::WalkthroughOptions options;
  options.filter.head = 2;  // H = 2: heads 0 and 1
  attn::Trace trace;
  std::ostringstream out;
  try {
    attn::StreamingWalkthrough printer(out, trace, model.model, model.input, options, true);
    FAIL("expected an InputError");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()) == "--head: expected an index below H=2, found 2");
  }
  CHECK(out.str().empty());
}

namespace {
// Lines of `text` and the widest of them on screen.
std::pair<std::size_t, std::size_t> lines_and_width(const std::string& text) {
  std::size_t lines = 0, widest = 0, start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    widest = std::max(widest, attn::display_width(text.substr(start, end - start)));
    ++lines;
    start = end + 1;
  }
  return {lines, widest};
}
}  // namespace

TEST_CASE("the default lesson: at most 500 lines of at most 75 columns", "[walkthrough][default]") {
  // What `attn explain "I love AI"` prints at 75 columns: the built-in model (the trained
  // translator), the decoder fed its own greedy picks until it predicts <EOS>: it reads
  // "<BOS> J' aime l' IA". It was 1,172 lines (67 steps; --brief 938), 304 of them wider than 75.
  attn::LoadedModel model = attn::load_model_text(attn::default_model_json(), attn::kDefaultModelSource);
  attn::replace_source_text(model.model, model.input, "I love AI", "text");
  CHECK(attn::extend_target_greedily(model.model, model.input, attn::generated_length(model.input)) == 4);
  attn::WalkthroughOptions options;
  options.array.line_width = 75;
  const std::string text = kept_walkthrough_of(model, options);
  INFO(text);
  const auto [lines, widest] = lines_and_width(text);
  CHECK(lines <= 500);
  CHECK(widest <= 75);
  // Nothing a learner needs is lost: every step, the causal mask over 5 target tokens, each kind
  // worked once, every weight (the d_ff-wide ones summarized), the top tokens, the alignment.
  CHECK(contains(text, "── Step 69: Softmax over the vocabulary"));
  CHECK(contains(text, "mask = [[  0. -inf -inf -inf -inf]"));
  for (const char* worked :
       {"Q[0][0] = X[0] · W_q[:,0]", "K[0][0] = X[0] · W_k[:,0]", "V[0][0] = X[0] · W_v[:,0]",
        "attn_out[0][0] = concat[0] · W_o[:,0]", "residual1[0] = X[0] + attn_out[0]",
        "z[0][0] = add_norm1[0] · W_1[:,0]", "hidden[0][0] = ReLU(z[0][0])", "ffn[0][0] = hidden[0] · W_2[:,0]",
        "logits[0][\"J'\"]", "W_1 = [[", "W_2 = [[", "gamma = [", "beta = ["})
    CHECK(contains(text, worked));
  CHECK(contains(text, "top 3 next tokens"));
  CHECK(contains(text, "each row writes: <BOS>→J'  J'→aime  aime→l'  l'→IA  IA→<EOS>"));
  CHECK(contains(text, "greedy pick (the most probable at each position): J' aime l' IA <EOS>"));
  // Each why once: the second attention block points back to the first.
  CHECK(contains(text, "── Step 7: Key projection ─"));
  CHECK(contains(text, "(as step 6)"));
}

TEST_CASE("every bundled example fits in 75 columns, and in 60", "[walkthrough][width]") {
  for (std::size_t width : {75, 60}) {
    attn::WalkthroughOptions options;
    options.array.line_width = width;
    for (const auto& example : attn::bundled_examples()) {
      INFO(example.name << " at " << width);
      const attn::LoadedModel model = attn::load_model_text(example.json, example.name);
      const std::string text = kept_walkthrough_of(model, options);
      CHECK(lines_and_width(text).second <= width);
    }
  }
}

TEST_CASE("the Llama-style example walks through every variant in order", "[walkthrough][variants]") {
  const std::string text = walkthrough_of("/data/examples/llama_block.json");
  INFO(text);
  // The layer's steps in the order the forward pass records them: RMSNorm, the projections
  // (keys and values G = 1 head wide), the split, RoPE on Q and K, the repeat, the window's
  // mask used, SwiGLU.
  const char* in_order[] = {"Step 4: Causal mask with a sliding window of W = 4",
                            "query i sees the keys i-3 .. i",
                            "Step 5: RMSNorm before the sub-layer (pre-norm)",
                            "(S=7,N=8) @ (N=8,G*d=4) -> (S=7,G*d=4)",
                            "K_heads = K split into 1 key/value head",
                            "Step 12: Rotate the queries by position (RoPE)",
                            "position 1, pair (0, 2): angle = 1 × 10000^(-0/4) = 1 × 1 = 1",
                            "13  K_rope = K_heads turned by position -> (G=1,S=7,d=4)",
                            "Step 14: Repeat the 1 key head for the 2 query heads",
                            "(G=1,S=7,d=4) -> (H=2,S=7,d=4)",
                            "key head 0 -> query heads 0, 1",
                            "K_T = K_rep.transpose(-2, -1)",
                            "scores = Q_rope · K_T",
                            "context = weights · V_rep",
                            "hidden = SiLU(a) ⊙ u",
                            "Final RMSNorm of the decoder-only stack"};
  std::size_t at = 0;
  for (const char* line : in_order) {
    INFO(line);
    const std::size_t found = text.find(line, at);
    REQUIRE(found != std::string::npos);
    at = found;
  }
  // RoPE adds nothing to the embeddings.
  CHECK(contains(text, "X = emb   (no positions added: RoPE turns the queries and keys inside"));
  CHECK_FALSE(contains(text, "PE ="));
}

TEST_CASE("attn grad works one RoPE pair and one repeat_kv element backward", "[walkthrough][variants][backward]") {
  // llama_block: H = 2 query heads share G = 1 key/value head; RoPE on q and k (theta 10000).
  attn::LoadedModel model = attn::load_model_text(attn::find_example("llama_block").json, "llama_block");
  attn::replace_labels(model.model, model.input, "the cat sat on the mat <EOS>", "test");
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  attn::run_backward(model.model, model.input, trace);
  attn::WalkthroughOptions options;
  options.array.line_width = 1000;  // the worked lines unwrapped
  std::ostringstream out;
  attn::print_walkthrough(out, trace, model.model, model.input, options);
  const std::string text = out.str();
  // The backward walks layer 1 first: its steps are the ones worked. Unbatched (H,S,d).
  const std::string at = "grad.decoder.1.self_attention.";
  const attn::TraceEntry* rep = find_entry(trace, at + "k_repeat");  // (H=2,S=7,d=4)
  const attn::TraceEntry* rope = find_entry(trace, at + "k_rope");   // (G=1,S=7,d=4)
  const attn::TraceEntry* heads = find_entry(trace, at + "k_heads");
  REQUIRE(rep);
  REQUIRE(rope);
  REQUIRE(heads);
  const std::size_t S = 7, d = 4;
  const auto number = [](double v) { return attn::format_worked_number(v, 4); };
  // repeat_kv: key head 0's element [0][0] is query head 0's plus query head 1's.
  const double sum = rep->tensor.data[0] + rep->tensor.data[S * d];
  CHECK(rope->tensor.data[0] == Approx(sum).margin(1e-15));
  const std::size_t repeat_at = text.find("dL/dK_rope[0][0][0] = dL/dK_rep[0][0][0] + dL/dK_rep[1][0][0]\n");
  REQUIRE(repeat_at != std::string::npos);
  CHECK(text.find(" = " + number(sum) + "\n", repeat_at) < text.find("Why:", repeat_at));
  CHECK(contains(text, "Why: query heads 0 and 1 each read a copy of this head,"));
  // RoPE: position 1, pair (0, 2), angle 1·10000^0 = 1: dx[0] = dy[0]·cos 1 + dy[2]·sin 1,
  // dx[2] = dy[2]·cos 1 - dy[0]·sin 1, as the step's gradient dL/dK_heads holds them.
  const double* dy = rope->tensor.data.data() + 1 * d;
  const double* dx = heads->tensor.data.data() + 1 * d;
  CHECK(dx[0] == Approx(dy[0] * std::cos(1.0) + dy[2] * std::sin(1.0)).margin(1e-15));
  CHECK(dx[2] == Approx(dy[2] * std::cos(1.0) - dy[0] * std::sin(1.0)).margin(1e-15));
  const std::size_t rope_at = text.find("dL/dK_heads[0][1][0] = dL/dK_rope[0][1][0]·cos + dL/dK_rope[0][1][2]·sin = ");
  REQUIRE(rope_at != std::string::npos);
  CHECK(text.find(" = " + number(dx[0]) + "\n", rope_at) == text.find("\n", rope_at) - number(dx[0]).size() - 3);
  CHECK(contains(text, "dL/dK_heads[0][1][2] = dL/dK_rope[0][1][2]·cos - dL/dK_rope[0][1][0]·sin = "));
  CHECK(contains(text, "dL/dQ_heads[0][1][0] = dL/dQ_rope[0][1][0]·cos + dL/dQ_rope[0][1][2]·sin = "));
}
