#include "attn/forward.h"

#include <cmath>

#include <catch2/catch.hpp>

#include "trace_lookup.h"

#include "attn/model_file.h"

using Catch::Matchers::WithinAbs;

namespace {
const std::string kSeed000 = std::string(ATTN_SOURCE_DIR) + "/data/examples/seed000_batched_mha.json";

// Round half away from zero to `digits` decimals, as the notebook's printed values are.
double rounded(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}
}  // namespace

TEST_CASE("seed 000: every printed value of the batched walkthrough", "[forward][seed000]") {
  const attn::LoadedModel model = attn::load_model_file(kSeed000);
  attn::Trace trace;
  const attn::Tensor out = attn::run_model(model.model, model.input, trace);

  // Q_total as printed (4 decimals): row B=0,S=0 and B=1,S=1.
  const attn::Tensor& q = find_entry(trace, "encoder.0.attention.q")->tensor;
  REQUIRE(q.shape == attn::Shape{2, 6, 4});
  const double q00[] = {-1.5806, 0.1079, -2.348, 1.6944};
  for (std::size_t j = 0; j < 4; ++j) CHECK(rounded(q.at({0, 0, j}), 4) == q00[j]);
  const double q11[] = {3.6876, -4.2249, 1.7104, 0.0388};
  for (std::size_t j = 0; j < 4; ++j) CHECK(rounded(q.at({1, 1, j}), 4) == q11[j]);
  CHECK(rounded(q.at({0, 3, 1}), 4) == 5.0966);

  // Raw scores, batch 0 head 0, printed with 8 significant digits.
  const attn::Tensor& scores = find_entry(trace, "encoder.0.attention.scores")->tensor;
  REQUIRE(scores.shape == attn::Shape{2, 2, 6, 6});
  CHECK_THAT(scores.at({0, 0, 0, 0}), WithinAbs(1.27232943, 5e-9));
  CHECK_THAT(scores.at({0, 0, 3, 3}), WithinAbs(-42.9283892, 5e-8));
  CHECK_THAT(scores.at({0, 1, 0, 0}), WithinAbs(11.2890025, 5e-8));

  // Scaled scores (batch 0, head 0), .round(2) as printed.
  const double scaled00[6][6] = {
      {0.9, -1.36, -5.84, -7.28, 4.87, 3.91},     {-0.49, -0.81, -1.67, -5.84, 3.58, 3.95},
      {-4.83, -2.55, 0.68, -23.01, 13.36, 17.55}, {-4.52, -3.78, -3.73, -30.35, 18.12, 21.89},
      {3.4, -0.83, -8.65, -0.33, 1.11, -2.09},    {2.12, 0.22, -3.07, 4.46, -2.28, -4.2}};
  const attn::Tensor& scaled = find_entry(trace, "encoder.0.attention.scaled_scores")->tensor;
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = 0; j < 6; ++j) CHECK(rounded(scaled.at({0, 0, i, j}), 2) == scaled00[i][j]);

  // Attention weights (batch 0, head 0), .round(2), and the first row's sum.
  const double weights00[6][6] = {{0.01, 0, 0, 0, 0.71, 0.27},    {0.01, 0, 0, 0, 0.4, 0.58},
                                  {0, 0, 0, 0, 0.01, 0.99},       {0, 0, 0, 0, 0.02, 0.98},
                                  {0.87, 0.01, 0, 0.02, 0.09, 0}, {0.09, 0.01, 0, 0.9, 0, 0}};
  const attn::Tensor& weights = find_entry(trace, "encoder.0.attention.weights")->tensor;
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = 0; j < 6; ++j) CHECK(rounded(weights.at({0, 0, i, j}), 2) == weights00[i][j]);
  double row0 = 0;
  for (std::size_t j = 0; j < 6; ++j) row0 += weights.at({0, 0, 0, j});
  CHECK_THAT(row0, WithinAbs(1.0, 1e-15));

  // Context vectors (8 decimals as printed).
  const attn::Tensor& context = find_entry(trace, "encoder.0.attention.context")->tensor;
  REQUIRE(context.shape == attn::Shape{2, 2, 6, 2});
  CHECK_THAT(context.at({0, 0, 0, 0}), WithinAbs(2.14402292, 5e-9));
  CHECK_THAT(context.at({0, 0, 0, 1}), WithinAbs(0.39960117, 5e-9));
  CHECK_THAT(context.at({0, 1, 5, 1}), WithinAbs(4.73762408, 5e-9));
  CHECK_THAT(context.at({1, 0, 2, 0}), WithinAbs(-4.76704565, 5e-9));
  CHECK_THAT(context.at({1, 1, 5, 1}), WithinAbs(-1.46183568, 5e-9));
  // The context is weights · V (its code), not "Scores ⋅ V" (its summary table): scores · V would make
  // context[0][0][0][0] = 43.8916 (NumPy on attn's dump).
  const attn::Tensor& v_heads = find_entry(trace, "encoder.0.attention.v_heads")->tensor;
  double weighted = 0, by_scores = 0;
  for (std::size_t j = 0; j < 6; ++j) {
    weighted += weights.at({0, 0, 0, j}) * v_heads.at({0, 0, j, 0});
    by_scores += scores.at({0, 0, 0, j}) * v_heads.at({0, 0, j, 0});
  }
  CHECK_THAT(weighted, WithinAbs(context.at({0, 0, 0, 0}), 1e-12));
  CHECK(rounded(by_scores, 4) == 43.8916);

  // Concatenated output, batch 0 word 0: [ 2.14402292  0.39960117 -2.01801767 -1.62729909]
  const attn::Tensor& concat = find_entry(trace, "encoder.0.attention.concat")->tensor;
  REQUIRE(concat.shape == attn::Shape{2, 6, 4});
  const double concat00[] = {2.14402292, 0.39960117, -2.01801767, -1.62729909};
  for (std::size_t j = 0; j < 4; ++j) CHECK_THAT(concat.at({0, 0, j}), WithinAbs(concat00[j], 5e-9));
  const double concat15[] = {1.7634395, -0.22815464, -0.49290634, -1.46183568};
  for (std::size_t j = 0; j < 4; ++j) CHECK_THAT(concat.at({1, 5, j}), WithinAbs(concat15[j], 5e-9));

  // No W_o: the block's output is the concatenation, and no "output" tensor is recorded.
  CHECK(find_entry(trace, "encoder.0.attention.output") == nullptr);
  CHECK(out.data == concat.data);
}

TEST_CASE("a projection's bias is a step of its own: q, then q_biased, which the heads split", "[forward][bias]") {
  // b_q and b_v given, b_k not: k has no k_biased step
  const attn::LoadedModel model = attn::load_model_text(R"({
    "model": {"d_model": 2, "num_heads": 1, "positional_encoding": "none"},
    "input": {"X": [[1, 2], [3, -1]]},
    "encoder": [{"attention": {"W_q": "identity", "W_k": "identity", "W_v": "identity",
                               "b_q": [0.5, -1], "b_v": [1, 1]}}]})",
                                                        "t.json");
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  std::vector<std::string> names;
  for (const auto& e : trace.entries()) names.push_back(e.name);
  const std::string p = "encoder.0.attention.";
  CHECK(names == std::vector<std::string>{"input", p + "q", p + "q_biased", p + "k", p + "v", p + "v_biased",
                                          p + "q_heads", p + "k_heads", p + "v_heads", p + "k_t", p + "scores",
                                          p + "scaled_scores", p + "weights", p + "context", p + "concat"});
  // X · I = X, then + b_q row by row (docs/steps/bias.md)
  CHECK(find_entry(trace, p + "q")->tensor.data == std::vector<double>{1, 2, 3, -1});
  CHECK(find_entry(trace, p + "q_biased")->tensor.data == std::vector<double>{1.5, 1, 3.5, -2});
  CHECK(find_entry(trace, p + "q_heads")->tensor.data == std::vector<double>{1.5, 1, 3.5, -2});
  CHECK(find_entry(trace, p + "v_heads")->tensor.data == std::vector<double>{2, 3, 4, 0});
}

TEST_CASE("trace names and order for one attention block", "[forward]") {
  const attn::LoadedModel model = attn::load_model_text(R"({
    "model": {"d_model": 4, "num_heads": 2, "causal": true},
    "input": {"X": {"randn": [3, 4]}},
    "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "identity"}}]})",
                                                        "t.json");
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  std::vector<std::string> names;
  for (const auto& e : trace.entries()) names.push_back(e.name);
  const std::string p = "encoder.0.attention.";
  CHECK(names == std::vector<std::string>{"input", "encoder.mask", p + "q", p + "k", p + "v", p + "q_heads",
                                          p + "k_heads", p + "v_heads", p + "k_t", p + "scores", p + "scaled_scores",
                                          p + "masked_scores", p + "weights", p + "context", p + "concat",
                                          p + "output"});
  // Unbatched input: recorded without the B axis.
  CHECK(find_entry(trace, p + "q_heads")->tensor.shape == attn::Shape{2, 3, 2});
  CHECK(find_entry(trace, p + "scores")->tensor.axes == attn::AxisNames{"H", "S", "S"});
  // Causal: query 0 sees only key 0.
  CHECK(find_entry(trace, p + "weights")->tensor.at({1, 0, 0}) == 1.0);
  // W_o = identity: output equals the concatenation.
  CHECK(find_entry(trace, p + "output")->tensor.data == find_entry(trace, p + "concat")->tensor.data);
}

TEST_CASE("per-head weights equal the matching slice of the fused projection", "[forward][seed002]") {
  const attn::LoadedModel model =
      attn::load_model_file(std::string(ATTN_SOURCE_DIR) + "/data/examples/seed002_identity_heads.json");
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  // Seed 002, head 1 = X[:, 2:4] attention; X = I love machine learning.
  // Head 0 sees features 0-1: q = k = v = X[:, :2] = [[1,0],[0,1],[1,1],[0,1]].
  // scores row 0 ("I") = [1, 0, 1, 0] / √2 -> softmax = e^a / (2e^a + 2), a = 1/√2
  const attn::Tensor& w = find_entry(trace, "encoder.0.attention.weights")->tensor;
  const double a = std::exp(1 / std::sqrt(2.0));
  CHECK_THAT(w.at({0, 0, 0}), WithinAbs(a / (2 * a + 2), 1e-15));
  CHECK_THAT(w.at({0, 0, 1}), WithinAbs(1 / (2 * a + 2), 1e-15));
  // context row 0, head 0 = sum_j w_j v_j = (a*[1,0] + [0,1] + a*[1,1] + [0,1]) / (2a+2)
  const attn::Tensor& c = find_entry(trace, "encoder.0.attention.context")->tensor;
  CHECK_THAT(c.at({0, 0, 0}), WithinAbs(2 * a / (2 * a + 2), 1e-15));
  CHECK_THAT(c.at({0, 0, 1}), WithinAbs((a + 2) / (2 * a + 2), 1e-15));
  // W_o = identity: output = concat
  CHECK(find_entry(trace, "encoder.0.attention.output")->tensor.data ==
        find_entry(trace, "encoder.0.attention.concat")->tensor.data);
}

TEST_CASE("seed 003: the printed embeddings, Q and attention scores, digit for digit", "[forward][seed003]") {
  // np.random.seed(0); token_embeddings = np.random.randn(4, 8); W_q, W_k, W_v = randn(8, 4);
  // one head of size 4 on d_model 8, no W_o. The document prints with
  // np.set_printoptions(precision=3, suppress=True).
  const attn::LoadedModel model =
      attn::load_model_file(std::string(ATTN_SOURCE_DIR) + "/data/examples/seed003_single_head.json");
  REQUIRE_FALSE(model.input.batched);
  attn::Trace trace(!model.input.batched);
  const attn::Tensor out = attn::run_model(model.model, model.input, trace);

  // "1. TOKEN EMBEDDINGS" Values:
  const double embeddings[4][8] = {{1.764, 0.4, 0.979, 2.241, 1.868, -0.977, 0.95, -0.151},
                                   {-0.103, 0.411, 0.144, 1.454, 0.761, 0.122, 0.444, 0.334},
                                   {1.494, -0.205, 0.313, -0.854, -2.553, 0.654, 0.864, -0.742},
                                   {2.27, -1.454, 0.046, -0.187, 1.533, 1.469, 0.155, 0.378}};
  const attn::Tensor& x = find_entry(trace, "input")->tensor;
  REQUIRE(x.shape == attn::Shape{4, 8});
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 8; ++j) CHECK(rounded(x.at({i, j}), 3) == embeddings[i][j]);

  // "Q (what each token looks for)":
  const double q_printed[4][4] = {{-5.592, -4.286, -7.37, 4.027},
                                  {-1.781, -0.435, -3.429, 0.881},
                                  {2.871, -2.977, 2.418, 0.502},
                                  {-7.225, -8.378, -1.89, 1.252}};
  const attn::Tensor& q = find_entry(trace, "encoder.0.attention.q")->tensor;
  REQUIRE(q.shape == attn::Shape{4, 4});
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) CHECK(rounded(q.at({i, j}), 3) == q_printed[i][j]);

  // "4. ATTENTION SCORES (before softmax)": the notebook computes
  //   attention_scores = (Q @ K.T) / np.sqrt(head_dimension)
  // so its "scores" are already divided by sqrt(4) = 2: attn's scaled_scores. Checked with
  // NumPy 1.24: (Q @ K.T)[0, 0] = 63.176..., divided by 2 = 31.588... as printed.
  const double scores_printed[4][4] = {{31.588, 2.933, 12.022, -9.08},
                                       {11.106, 1.093, 3.98, 0.299},
                                       {-8.946, -4.35, 5.684, -5.326},
                                       {33.206, 5.506, -4.183, -22.69}};
  const attn::Tensor& scaled = find_entry(trace, "encoder.0.attention.scaled_scores")->tensor;
  const attn::Tensor& raw = find_entry(trace, "encoder.0.attention.scores")->tensor;
  REQUIRE(scaled.shape == attn::Shape{1, 4, 4});  // (H=1,S,S)
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) CHECK(rounded(scaled.at({0, i, j}), 3) == scores_printed[i][j]);
  CHECK(rounded(raw.at({0, 0, 0}), 3) == 63.176);  // the raw Q·Kᵀ is twice the printed value

  // No W_o: the block's output is the concat, (S=4, H*d=4), not d_model wide.
  CHECK(find_entry(trace, "encoder.0.attention.output") == nullptr);
  const attn::Tensor& concat = find_entry(trace, "encoder.0.attention.concat")->tensor;
  CHECK(concat.shape == attn::Shape{4, 4});
  CHECK(out.data == concat.data);
}

TEST_CASE("trace names and order for the whole transformer, post-norm, padded batch", "[forward][names]") {
  const attn::LoadedModel model = attn::load_model_text(R"({
    "model": {"d_model": 4, "num_heads": 2, "d_ff": 6, "seed": 1},
    "vocab": ["<PAD>", "<UNK>", "<BOS>", "I", "love", "AI"],
    "embedding": "randn",
    "input": {"text": ["I love AI", "AI"], "target_tokens": [["<BOS>", "I"], ["<BOS>"]]},
    "encoder": "randn", "encoder_norm": {}, "decoder": "randn", "decoder_norm": {},
    "output": "tied"})",
                                                        "t.json");
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  std::vector<std::string> names;
  for (const auto& e : trace.entries()) names.push_back(e.name);
  const auto attention = [](const std::string& p, bool masked) {
    std::vector<std::string> n;
    for (const char* s : {"q", "k", "v", "q_heads", "k_heads", "v_heads", "k_t", "scores", "scaled_scores"})
      n.push_back(p + s);
    if (masked) n.push_back(p + "masked_scores");
    for (const char* s : {"weights", "context", "concat", "output"}) n.push_back(p + s);
    return n;
  };
  std::vector<std::string> expected = {"tokens.ids", "tokens.padding_mask", "embedding.lookup", "embedding.positional",
                                       "input",      "encoder.mask"};
  for (const auto& n : attention("encoder.0.attention.", true)) expected.push_back(n);
  for (const char* n : {"encoder.0.residual1", "encoder.0.add_norm1", "encoder.0.ffn.hidden", "encoder.0.ffn.output",
                        "encoder.0.residual2", "encoder.0.add_norm2", "encoder.0.output", "encoder.norm",
                        "target_tokens.ids", "target_tokens.padding_mask", "target_embedding.lookup",
                        "target_embedding.positional", "target_input", "decoder.self_mask", "decoder.cross_mask"})
    expected.push_back(n);
  for (const auto& n : attention("decoder.0.self_attention.", true)) expected.push_back(n);
  expected.push_back("decoder.0.residual1");
  expected.push_back("decoder.0.add_norm1");
  for (const auto& n : attention("decoder.0.cross_attention.", true)) expected.push_back(n);
  for (const char* n : {"decoder.0.residual2", "decoder.0.add_norm2", "decoder.0.ffn.hidden", "decoder.0.ffn.output",
                        "decoder.0.residual3", "decoder.0.add_norm3", "decoder.0.output", "decoder.norm",
                        "output.logits", "output.probabilities"})
    expected.push_back(n);
  CHECK(names == expected);

  // Shapes: (B=2,S=3) source, (B=2,T=2) target, V = 6
  CHECK(find_entry(trace, "tokens.ids")->tensor.data == std::vector<double>{3, 4, 5, 5, 0, 0});
  CHECK(find_entry(trace, "tokens.padding_mask")->tensor.data == std::vector<double>{0, 0, 0, 0, 1, 1});
  CHECK(find_entry(trace, "encoder.mask")->tensor.shape == attn::Shape{2, 3, 3});
  CHECK(find_entry(trace, "decoder.self_mask")->tensor.shape == attn::Shape{2, 2, 2});
  CHECK(find_entry(trace, "decoder.cross_mask")->tensor.shape == attn::Shape{2, 2, 3});
  CHECK(find_entry(trace, "decoder.0.cross_attention.scores")->tensor.axes == attn::AxisNames{"B", "H", "T", "S"});
  CHECK(find_entry(trace, "output.probabilities")->tensor.shape == attn::Shape{2, 2, 6});
  // Padded keys get zero weight: batch 1 ("AI") attends only to its one real token.
  const attn::Tensor& w = find_entry(trace, "encoder.0.attention.weights")->tensor;
  CHECK(w.at({1, 0, 0, 0}) == 1.0);
  CHECK(w.at({1, 1, 2, 1}) == 0.0);
  // The decoder's first position sees only itself (causal).
  CHECK(find_entry(trace, "decoder.0.self_attention.weights")->tensor.at({0, 1, 0, 0}) == 1.0);
  // Each probability row sums to 1.
  const attn::Tensor& p = find_entry(trace, "output.probabilities")->tensor;
  double sum = 0;
  for (std::size_t v = 0; v < 6; ++v) sum += p.at({1, 1, v});
  CHECK_THAT(sum, WithinAbs(1.0, 1e-15));
}

TEST_CASE("pre-norm names: the norm comes before each sub-layer", "[forward][names]") {
  const attn::LoadedModel model = attn::load_model_text(R"({
    "model": {"d_model": 4, "num_heads": 1, "d_ff": 4, "norm_first": true, "num_layers": 2},
    "input": {"X": {"randn": [2, 4]}},
    "encoder": "randn"})",
                                                        "t.json");
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  std::vector<std::string> names;
  for (const auto& e : trace.entries())
    if (e.name.find(".attention.") == std::string::npos) names.push_back(e.name);
  CHECK(names == std::vector<std::string>{"input", "encoder.0.norm1", "encoder.0.residual1", "encoder.0.norm2",
                                          "encoder.0.ffn.hidden", "encoder.0.ffn.output", "encoder.0.residual2",
                                          "encoder.0.output", "encoder.1.norm1", "encoder.1.residual1",
                                          "encoder.1.norm2", "encoder.1.ffn.hidden", "encoder.1.ffn.output",
                                          "encoder.1.residual2", "encoder.1.output"});
  // pre-norm: the layer's output is the residual sum, not normalized
  CHECK(find_entry(trace, "encoder.1.output")->tensor.data == find_entry(trace, "encoder.1.residual2")->tensor.data);
}
