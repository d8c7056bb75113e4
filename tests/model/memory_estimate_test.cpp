// The memory estimate of attn grad's runs: the whole forward trace, and a gradient as large
// again for every tensor and every weight.
#include <catch2/catch.hpp>

#include "attn/model_file.h"
#include "attn/run_memory.h"
#include "model/memory_estimate.h"

TEST_CASE("attn grad's estimate counts the kept trace and every gradient", "[memory_estimate]") {
  attn::ModelConfig config;
  config.d_model = 512;
  config.num_heads = 8;
  config.d_head = 64;
  config.d_ff = 2048;
  attn::RunSize size;
  size.seq_len = 128;
  size.encoder_layers = 6;
  size.trace_kept = false;
  const std::uint64_t streamed = attn::estimate_run_bytes(config, size);
  size.trace_kept = true;
  const std::uint64_t kept = attn::estimate_run_bytes(config, size);
  size.backward = true;
  const std::uint64_t backward = attn::estimate_run_bytes(config, size);
  CHECK(streamed < kept);
  // the weights' gradients alone are as large as the weights (6 layers of 3.1M numbers)
  CHECK(backward >= kept + 6ULL * 8 * (4 * 512 * 512 + 2 * 512 * 2048));

  // A run that fits for attn explain but not for attn grad: the file's reader refuses
  // before X is drawn only what the forward alone cannot fit; what grad adds is the run's
  // own estimate (attn/run_memory.h), which refuses it once the model is loaded, naming X.
  const std::string text = R"({"model": {"d_model": 64, "num_heads": 4, "d_ff": 256, "num_layers": 2},
    "input": {"X": {"randn": [64, 64]}}, "encoder": "randn"})";
  attn::LoadOptions options;
  options.trace_kept = true;
  size = attn::RunSize{};
  config.d_model = 64;
  config.num_heads = 4;
  config.d_head = 16;
  config.d_ff = 256;
  size.seq_len = 64;
  size.target_len = 64;  // as the loader counts an X while reading it
  size.encoder_layers = 2;
  // half as much again as explain's run: a gradient for everything doubles it
  options.max_memory_bytes = attn::estimate_run_bytes(config, size) * 3 / 2;
  const attn::LoadedModel explained = attn::load_model_text(text, "model.json", options);
  CHECK_NOTHROW(attn::check_run_memory(explained.model, explained.input, options, attn::run_plan(options)));
  options.backward = true;
  const attn::LoadedModel differentiated = attn::load_model_text(text, "model.json", options);
  CHECK_THROWS_WITH(
      attn::check_run_memory(differentiated.model, differentiated.input, options, attn::run_plan(options)),
      Catch::Contains("model.json: input: this run would need about"));
  // under a limit the forward alone does not fit, the reader refuses before X is drawn
  options.max_memory_bytes = attn::estimate_run_bytes(config, size) - 1;
  CHECK_THROWS_WITH(attn::load_model_text(text, "model.json", options),
                    Catch::Contains("model.json: input.X: this run would need about"));
}

TEST_CASE("the estimate counts a block's optional weights and their steps (attn/block_weights.def)",
          "[memory_estimate][block_weights]") {
  // One encoder block of d_model 8, 2 heads of d = 4, 4 positions. QK-norm's gammas, (d,)
  // each, and its two steps q_normed, k_normed, (B,S,H*d) each, are counted when
  // model.qk_norm is on: 8 bytes x (2 x 4 + 2 x 4 x 8) more.
  attn::ModelConfig config;
  config.d_model = 8;
  config.num_heads = 2;
  config.d_head = 4;
  attn::RunSize size;
  size.seq_len = 4;
  const std::uint64_t plain = attn::estimate_run_bytes(config, size);
  config.qk_norm = true;
  CHECK(attn::estimate_run_bytes(config, size) == plain + 8 * (2 * 4 + 2 * 4 * 8));
  // the gammas themselves: ones when the flag is on and the file does not give them
  const attn::LoadedModel normed = attn::load_model_text(
      R"({"model": {"d_model": 8, "num_heads": 2, "qk_norm": true}, "input": {"X": {"randn": [4, 8]}},
          "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn"}}]})",
      "m.json");
  CHECK(normed.model.encoder[0].attention.q_norm.data == std::vector<double>{1, 1, 1, 1});
  CHECK(normed.model.encoder[0].attention.k_norm.shape == attn::Shape{4});
}

TEST_CASE("the logit lens is counted: per layer of the last stack, B*T*(2N + 2V) numbers", "[memory_estimate][lens]") {
  attn::ModelConfig config;
  config.d_model = 768;
  config.num_heads = 12;
  config.d_head = 64;
  config.d_ff = 3072;
  attn::RunSize size;
  size.seq_len = 64;
  size.target_len = 64;
  size.encoder_layers = 0;
  size.decoder_layers = 12;
  size.vocab = 50257;
  const std::uint64_t plain = attn::estimate_run_bytes(config, size);
  size.lens = true;
  const std::uint64_t lens = attn::estimate_run_bytes(config, size);
  // 12 layers x 64 positions x (2*768 + 2*50257) numbers of 8 bytes: 627.6 MB
  const std::uint64_t expected = 12ULL * 64 * (2 * 768 + 2 * 50257) * 8;
  CHECK(lens - plain + 1 >= expected);  // within the one byte each estimate's rounding may take
  CHECK(lens - plain <= expected + 1);
}

TEST_CASE("ablation is counted: the unablated probabilities kept, B*T*V, and a context_ablated per layer",
          "[memory_estimate][ablation]") {
  // GPT-2 small's sizes on 64 tokens: the unablated run's probabilities 64 x 50257 numbers, and
  // 12 layers' context_ablated of 64 x 12*64 numbers, 8 bytes each.
  attn::ModelConfig config;
  config.d_model = 768;
  config.num_heads = 12;
  config.d_head = 64;
  config.d_ff = 3072;
  attn::RunSize size;
  size.seq_len = 64;
  size.target_len = 64;
  size.encoder_layers = 0;
  size.decoder_layers = 12;
  size.vocab = 50257;
  const std::uint64_t plain = attn::estimate_run_bytes(config, size);
  size.ablation = true;
  const std::uint64_t ablated = attn::estimate_run_bytes(config, size);
  const std::uint64_t expected = (64ULL * 50257 + 12ULL * 64 * 768) * 8;  // 30.5 MB
  CHECK(ablated - plain + 1 >= expected);
  CHECK(ablated - plain <= expected + 1);
  // what a loaded run's input says: an ablation in RunInput sets it
  attn::RunInput input;
  input.ablation.heads.push_back({attn::Stack::Decoder, 0, 1});
  const attn::LoadedModel gpt = attn::load_model_text(
      R"({"model": {"d_model": 8, "num_heads": 2, "causal": true}, "input": {"X": {"randn": [4, 8]}},
          "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn"}}]})",
      "m.json");
  input.X = gpt.input.X;
  CHECK(attn::run_size_of(gpt.model, input).ablation);
  CHECK_FALSE(attn::run_size_of(gpt.model, gpt.input).ablation);
}

TEST_CASE("the estimate counts the bias steps of the biases a block has", "[memory_estimate][block_weights]") {
  // One encoder block of d_model 8, 2 heads of d = 4, 4 positions, B = 1. Each bias a block
  // has adds its step, q_biased, k_biased or v_biased, of (B,S,H*d) = 4 x 8 numbers: b_q,
  // b_k and b_v add 8 bytes x 3 x 4 x 8 = 768 bytes; W_o and b_o add no step.
  attn::ModelConfig config;
  config.d_model = 8;
  config.num_heads = 2;
  config.d_head = 4;
  attn::RunSize size;
  size.seq_len = 4;
  const std::uint64_t plain = attn::estimate_run_bytes(config, size);
  CHECK(attn::estimate_run_bytes(config, size, 0) == plain);
  CHECK(attn::estimate_run_bytes(config, size, 3) == plain + 768);
  CHECK(attn::estimate_run_bytes(config, size, 1) == plain + 256);

  // Which biases a model has, from its weights: the block with the most of them.
  const auto steps = [](const std::string& encoder) {
    const attn::LoadedModel loaded = attn::load_model_text(
        R"({"model": {"d_model": 8, "num_heads": 2}, "input": {"X": {"randn": [4, 8]}}, "encoder": )" + encoder + "}",
        "m.json");
    return attn::block_weight_steps(loaded.model);
  };
  CHECK(steps(R"([{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn"}}])") == 0);
  CHECK(steps(R"([{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn", "b_o": "randn"}}])") ==
        0);
  CHECK(steps(R"([{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn", "b_k": "randn"}},
                  {"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn",
                                 "b_q": "randn", "b_k": "randn", "b_v": "randn"}}])") == 3);

  // The loaded model's check (check_run_memory, what load_model asks of every format)
  // counts them, now as the run records them (attn/run_memory.h), in malloc's blocks (the
  // request and its 8-byte header rounded up to 16, less the header): the same model with
  // b_q, b_k and b_v needs each bias's 8 numbers (64 bytes in a block of 72), its shape (24)
  // and its axis name (a std::string, 40), 136 bytes; and their three steps q_biased,
  // k_biased, v_biased of (S=4,H*d=8) (B=1 is not recorded), 256 bytes of numbers in a
  // block of 264, a shape of two sizes in 24 and two axis names in 72, 360 bytes each,
  // which a run keeping its trace keeps and its attention block holds until it ends:
  // 3 x 136 + 2 x 3 x 360 = 2568 bytes; and each kept entry's own (run_memory_test.cpp works
  // them for this block): its place in the trace's vector (2 x 168), its name
  // ("encoder.0.attention.q_biased", 28 bytes: 40), its two operands in one block (232), q's
  // name (24), shape and axes (96), b_q's shape and axis (24 + 40): 792 each; and q_heads,
  // k_heads and v_heads now read q_biased, whose name takes 16 bytes more than q's: 3 x 792
  // + 3 x 16 = 2424. 4992 bytes more.
  attn::LoadOptions options;
  options.trace_kept = true;
  const auto model = [](const std::string& biases) {
    return attn::load_model_text(R"({"model": {"d_model": 8, "num_heads": 2}, "input": {"X": {"randn": [4, 8]}},
        "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn")" +
                                     biases + "}}]}",
                                 "b.json");
  };
  const attn::LoadedModel unbiased = model(""), biased = model(R"(, "b_q": "randn", "b_k": "randn", "b_v": "randn")");
  const attn::RunPlan kept = attn::run_plan(options);
  const std::uint64_t without = attn::estimate_run_memory(unbiased.model, unbiased.input, kept);
  CHECK(attn::estimate_run_memory(biased.model, biased.input, kept) == without + 4992);
  options.max_memory_bytes = without + 100;
  CHECK_NOTHROW(attn::check_run_memory(unbiased.model, unbiased.input, options));
  CHECK_THROWS_WITH(attn::check_run_memory(biased.model, biased.input, options),
                    Catch::Contains("b.json: input: this run would need about"));
}
