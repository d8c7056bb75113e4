#include "attn/model_file.h"
#include "attn/error.h"
#include "model/json_reader.h"

#include <ctime>

#include <catch2/catch.hpp>
#include "error_message.h"

using attn::InputError;

namespace {
// The message load_model_text throws for `text`, or "" when it loads.
std::string error_of(const std::string& text) {
  try {
    attn::load_model_text(text, "model.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const char* kValid = R"({
  "model": {"d_model": 4, "num_heads": 2},
  "input": {"X": [[1, 0, 1, 0], [0, 1, 1, 0]]},
  "encoder": [{"attention": {"W_q": "identity", "W_k": "identity", "W_v": "identity"}}]})";
}  // namespace

TEST_CASE("a valid file loads with defaults filled in", "[loader]") {
  const attn::LoadedModel m = attn::load_model_text(kValid, "model.json");
  CHECK(m.model.config.d_head == 2);
  CHECK_FALSE(m.model.config.causal);
  CHECK_FALSE(m.input.batched);
  CHECK(m.input.X.shape == attn::Shape{1, 2, 4});
  CHECK(m.model.encoder.size() == 1);
  CHECK_FALSE(m.model.encoder[0].attention.has_output_projection());
  CHECK(m.model.encoder[0].attention.W_q.at({2, 2}) == 1.0);
  CHECK(m.model.encoder[0].attention.W_q.at({2, 1}) == 0.0);
}

TEST_CASE("shape mismatch names file, path, expected and found", "[loader][errors]") {
  CHECK(error_of(R"({"model": {"d_model": 4, "num_heads": 2}, "input": {"X": [[1,2,3,4]]},
      "encoder": [{"attention": {"W_q": [[1,2,3],[1,2,3],[1,2,3],[1,2,3]], "W_k": "randn", "W_v": "randn"}}]})") ==
        "model.json: encoder[0].attention.W_q: expected shape [4, 4] (d_model x H*d_head), got [4, 3]");
}

TEST_CASE("d_model not divisible by num_heads", "[loader][errors]") {
  CHECK(
      error_of(
          R"({"model": {"d_model": 5, "num_heads": 2}, "input": {"X": [[1,2,3,4,5]]}, "encoder": [{"attention": {}}]})") ==
      "model.json: model.num_heads: expected a divisor of d_model = 5 (d_head defaults to d_model / num_heads), "
      "found 2; set d_head or change num_heads");
}

TEST_CASE("a single head with d_head different from d_model (seed 003)", "[loader]") {
  const attn::LoadedModel m = attn::load_model_text(R"({"model": {"d_model": 8, "num_heads": 1, "d_head": 4, "seed": 0},
      "input": {"X": {"randn": [4, 8]}}, "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn"}}]})",
                                                    "seed003.json");
  CHECK(m.model.encoder[0].attention.W_q.shape == attn::Shape{8, 4});
  // np.random.seed(0); randn(4, 8) then W_q = randn(8, 4): W_q[0, 0] is the 33rd draw
  CHECK(m.input.X.at({0, 0, 0}) == 1.764052345967664);
  CHECK(m.model.encoder[0].attention.W_q.at({0, 0}) == -0.8877857476301128);
}

TEST_CASE("unknown keys are errors with a suggestion", "[loader][errors]") {
  CHECK(
      error_of(
          R"({"model": {"d_model": 4, "num_heads": 2, "casual": true}, "input": {"X": [[1,2,3,4]]}, "encoder": []})") ==
      "model.json: model.casual: unknown key \"casual\"; did you mean \"causal\"?");
  CHECK(error_of(R"({"modle": {}})") == "model.json: modle: unknown key \"modle\"; did you mean \"model\"?");
}

TEST_CASE("missing fields, wrong types, ragged arrays, bad sizes", "[loader][errors]") {
  CHECK(error_of(R"({"input": {"X": [[1]]}, "encoder": []})") == "model.json: model: missing (this field is required)");
  CHECK(error_of(R"({"model": {"d_model": "4", "num_heads": 2}})") ==
        "model.json: model.d_model: expected a positive integer, found the string \"4\"");
  CHECK(error_of(R"({"model": {"d_model": 0, "num_heads": 2}})") ==
        "model.json: model.d_model: expected a positive integer, found 0");
  CHECK(error_of(R"({"model": {"d_model": 4, "num_heads": -2}})") ==
        "model.json: model.num_heads: expected a positive integer, found -2");
  CHECK(
      error_of(
          R"({"model": {"d_model": 2, "num_heads": 1}, "input": {"X": [[1, 2], [3]]}, "encoder": [{"attention": {}}]})") ==
      "model.json: input.X[1]: expected an array of 2 like its neighbours (ragged array), found an array of 1");
  CHECK(
      error_of(
          R"({"model": {"d_model": 2, "num_heads": 1}, "input": {"X": [[1, "a"]]}, "encoder": [{"attention": {}}]})") ==
      "model.json: input.X[0][1]: expected a number, found the string \"a\"");
  CHECK(error_of(R"({"model": {"d_model": 2, "num_heads": 1}, "input": {"X": [[1, 2]]}, "encoder": []})") ==
        "model.json: encoder: expected at least one layer, found an empty array");
  CHECK(
      error_of(
          R"({"model": {"d_model": 2, "num_heads": 1}, "input": {"X": [[1, 2, 3]]}, "encoder": [{"attention": {}}]})") ==
      "model.json: input.X: expected last axis of size d_model = 2, got shape [1, 3]");
  CHECK(
      error_of(
          R"({"model": {"d_model": 2, "num_heads": 1}, "input": {"X": [[1, 2]]}, "encoder": [{"attention": {"W_k": "randn", "W_v": "randn"}}]})") ==
      "model.json: encoder[0].attention.W_q: missing (this field is required)");
}

TEST_CASE("non-finite numbers and generator typos", "[loader][errors]") {
  CHECK(
      error_of(
          R"({"model": {"d_model": 2, "num_heads": 1}, "input": {"X": [[1e999, 2]]}, "encoder": [{"attention": {}}]})") ==
      "model.json: line 1, column 60: expected a finite number, found 1e999 (out of float64 range)");
  CHECK(
      error_of(
          R"({"model": {"d_model": 2, "num_heads": 1}, "input": {"X": [[1, 2]]}, "encoder": [{"attention": {"W_q": "randm"}}]})") ==
      "model.json: encoder[0].attention.W_q: expected numbers or one of \"randn\", \"zeros\", \"ones\", \"identity\", "
      "\"xavier_uniform\", \"normal_0.02\", \"kaiming_uniform\", found \"randm\"; did you mean \"randn\"?");
  CHECK(error_of(
            R"({"model": {"d_model": 2, "num_heads": 1}, "input": {"X": "randn"}, "encoder": [{"attention": {}}]})") ==
        "model.json: input.X: the shape is not implied by the model; write {\"randn\": [S, 2]} or {\"randn\": [B, S, "
        "2]}");
}

TEST_CASE("malformed JSON reports line and column", "[loader][errors]") {
  CHECK(error_of("{\n  \"model\": {\"d_model\": 4,,}\n}").rfind("model.json: malformed JSON at line 2, column 26", 0) ==
        0);
}

TEST_CASE("huge models are refused before anything is allocated", "[loader][errors]") {
  // X of 1.6e7 x 1000 float64: 1.28e11 bytes = 119.2 GiB, refused before a number is drawn.
  const std::string e =
      error_of(R"({"model": {"d_model": 1000, "num_heads": 1}, "input": {"X": {"randn": [16000000, 1000]}},
      "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn"}}]})");
  CHECK(e.rfind("model.json: input.X: this input alone would need 119.2 GiB, more than the limit of ", 0) == 0);
  // A small input but huge weights: refused from the declared sizes, before the weights
  // are drawn or the input read. W_q, W_k, W_v, W_o of 1e6 x 1e6: 8 x 4e12 bytes = 29802.3
  // GiB, and a little more for one token's activations.
  const std::string w =
      error_of(R"({"model": {"d_model": 1000000, "num_heads": 1}, "input": {"X": {"randn": [2, 1000000]}},
      "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn"}}]})");
  CHECK(w.rfind("model.json: model: the weights alone would need about 2980", 0) == 0);
  CHECK(w.find(" GiB (d_model=1000000, heads=1, d_ff=0, layers=1, vocab=0), more than the limit of ") !=
        std::string::npos);
}

TEST_CASE("a small memory limit is written in MiB or KiB, not as 0.0 GiB", "[loader][errors]") {
  // X alone: 8000 x 64 float64 = 4,096,000 bytes = 3.90625 MiB, over a 1 MiB limit (the
  // weights, 4 x 64 x 64 float64 = 128 KiB, fit).
  attn::LoadOptions options;
  options.max_memory_bytes = 1 << 20;
  std::string error;
  try {
    attn::load_model_text(R"({"model": {"d_model": 64, "num_heads": 8}, "input": {"X": {"randn": [8000, 64]}},
        "encoder": "randn"})",
                          "model.json", options);
  } catch (const InputError& e) {
    error = e.what();
  }
  CHECK(error == "model.json: input.X: this input alone would need 3.9 MiB, more than the limit of 1.0 MiB");
  // 8 KiB: the file parses into about 1.6 KiB and its weights with one token need 5.9 KiB
  // (1,952 bytes of numbers and 4 KiB for the layer's tensors); the run of 10 tokens, 17.8 KiB.
  options.max_memory_bytes = 8 << 10;
  error.clear();
  try {
    attn::load_model_text(R"({"model": {"d_model": 4, "num_heads": 2, "d_ff": 8}, "input": {"X": {"randn": [10, 4]}},
        "encoder": "randn"})",
                          "model.json", options);
  } catch (const InputError& e) {
    error = e.what();
  }
  CHECK(error.rfind("model.json: input.X: this run would need about ", 0) == 0);
  CHECK(error.find(" KiB (B=1, S=10, d_model=4, heads=2, layers=1), more than the limit of 8.0 KiB;") !=
        std::string::npos);
}

TEST_CASE("heads and fused matrices cannot both be given, and the head count must match", "[loader][errors]") {
  CHECK(error_of(R"({"model": {"d_model": 2, "num_heads": 2}, "input": {"X": [[1, 2]]},
      "encoder": [{"attention": {"heads": [{"W_q": "ones", "W_k": "ones", "W_v": "ones"}]}}]})") ==
        "model.json: encoder[0].attention.heads: expected 2 heads (num_heads), found 1");
  CHECK(error_of(R"({"model": {"d_model": 2, "num_heads": 1}, "input": {"X": [[1, 2]]},
      "encoder": [{"attention": {"W_q": "ones", "heads": []}}]})") ==
        "model.json: encoder[0].attention.W_q: expected either \"heads\" or fused W_q/W_k/W_v, found both");
}

TEST_CASE("token input is checked at load time, so validate sees what the run would refuse", "[loader][errors]") {
  const std::string vocab = R"("vocab": ["<PAD>", "I", "love"], "embedding": "randn", )";
  CHECK(
      error_of(
          R"({"model": {"d_model": 2, "num_heads": 1}, )" + vocab +
          R"("input": {"text": "I love AI"}, "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn"}}]})") ==
      "model.json: input.text: unknown token \"AI\" and the vocabulary has no \"<UNK>\"");
  CHECK(
      error_of(
          R"({"model": {"d_model": 2, "num_heads": 1}, )" + vocab +
          R"("input": {"text": ["I love", " "]}, "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn"}}]})") ==
      "model.json: input.text[1]: expected at least one token, found none");
  CHECK(
      error_of(
          R"({"model": {"d_model": 2, "num_heads": 1, "positional_encoding": "learned", "max_len": 1}, )" + vocab +
          R"("positions": "randn", "input": {"text": "I love"}, "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn"}}]})") ==
      "model.json: input.text: expected at most max_len = 1 tokens (the learned position table's rows), found 2");
}

TEST_CASE("the target must match the source's batch layout", "[loader][errors]") {
  const std::string head =
      R"({"model": {"d_model": 2, "num_heads": 1, "d_ff": 2}, "vocab": ["<PAD>", "<UNK>", "I"], "embedding": "randn",
      "encoder": "randn", "decoder": "randn", )";
  CHECK(error_of(head + R"("input": {"text": "I", "target_text": ["I"]}})") ==
        "model.json: input.target_text: expected a single target like the source, found a batch (a list)");
  CHECK(error_of(head + R"("input": {"text": ["I", "I"], "target_text": ["I"]}})") ==
        "model.json: input.target_text: expected 2 target sequences, one per source sentence, found 1");
  CHECK(error_of(head + R"("input": {"text": ["I", "I"], "target_X": {"randn": [3, 1, 2]}}})") ==
        "model.json: input.target_X: expected 2 target sequences, one per source sentence, found 3");
  CHECK(
      error_of(
          R"({"model": {"d_model": 2, "num_heads": 1, "d_ff": 2, "num_decoder_layers": 2}, "input": {"X": [[1, 2]], "target_X": [[1, 2]]},
      "encoder": "randn", "decoder": [{"self_attention": {}, "cross_attention": {}, "ffn": {}}]})") ==
      "model.json: decoder: expected 2 layers (model.num_decoder_layers), found 1");
}

TEST_CASE("regression inputs from fuzzing and review give one clear line", "[loader][errors][regression]") {
  const std::string dir = std::string(ATTN_SOURCE_DIR) + "/tests/regression/";
  const auto message_of = [&](const std::string& name) {
    try {
      attn::load_model_file(dir + name);
    } catch (const InputError& e) {
      return std::string(e.what()).substr(dir.size());
    }
    return std::string("(loaded)");
  };
  // Found by the fuzzer (4 bytes: '":', DEL, ':'): nlohmann quotes the DEL raw in "last read".
  CHECK(message_of("fuzz_del_in_unterminated_string.json") ==
        "fuzz_del_in_unterminated_string.json: malformed JSON at line 1, column 5: syntax error while parsing value - "
        "invalid string: missing closing quote; last read: '\":\\u007f:'");
  // Found by the fuzzer: a document that is null aborted 'attn validate' (an internal
  // exception escaped); explain and validate must both say what it is.
  CHECK(message_of("fuzz_null_document.json") == "fuzz_null_document.json: expected an object, found null");
  // Found while reducing it: "d_model": null aborted 'attn explain' the same way.
  CHECK(message_of("null_d_model.json") == "null_d_model.json: model.d_model: expected a positive integer, found null");
  CHECK(message_of("null_weight_and_layer.json") ==
        "null_weight_and_layer.json: encoder[0].attention.W_q: expected a [2, 2] array of numbers or \"randn\", "
        "\"zeros\", \"ones\", \"identity\", \"xavier_uniform\", \"normal_0.02\", \"kaiming_uniform\", found null");
  // A newline in a key split the error over two lines.
  CHECK(message_of("control_chars_in_key.json") ==
        "control_chars_in_key.json: mo\\ndel: unknown key \"mo\\ndel\"; did you mean \"model\"?");
}

TEST_CASE("validate reports a null the file wrote, and never aborts on it", "[loader][errors][regression]") {
  const std::string dir = std::string(ATTN_SOURCE_DIR) + "/tests/regression/";
  // Every message 'attn validate' prints for the file, without the folder.
  const auto validate = [&](const std::string& name) {
    attn::LoadOptions options;
    options.collect_all_errors = true;
    std::vector<std::string> messages;
    try {
      attn::load_model_file(dir + name, options);
    } catch (const attn::InputErrors& e) {
      for (const auto& error : e.errors()) messages.push_back(std::string(error.what()).substr(dir.size()));
    } catch (const InputError& e) {
      messages.push_back(std::string(e.what()).substr(dir.size()));
    }
    return messages;
  };
  CHECK(validate("fuzz_null_document.json") ==
        std::vector<std::string>{"fuzz_null_document.json: expected an object, found null"});
  CHECK(validate("null_d_model.json") ==
        std::vector<std::string>{"null_d_model.json: model.d_model: expected a positive integer, found null"});
  // Before the fix validate called this file valid ("0 encoder layers"): explicit nulls read as
  // "missing, already reported" and were skipped without a word.
  CHECK(validate("null_weight_and_layer.json") ==
        std::vector<std::string>{
            "null_weight_and_layer.json: encoder[0].attention.W_q: expected a [2, 2] array of numbers or \"randn\", "
            "\"zeros\", \"ones\", \"identity\", \"xavier_uniform\", \"normal_0.02\", \"kaiming_uniform\", found null",
            "null_weight_and_layer.json: encoder[1].attention: expected an object, found null"});
}

TEST_CASE("token input the tokenizer could not take is refused at load time, at the input's path", "[loader][errors]") {
  const std::string head = R"({"model": {"d_model": 2, "num_heads": 1}, "encoder": "randn", )";
  // Sentences of different lengths, and no <PAD> to fill the shorter one.
  CHECK(error_of(head + R"("vocab": ["<UNK>", "I", "love"], "embedding": "randn",
      "input": {"tokens": [["I", "love"], ["I"]]}})") ==
        "model.json: input.tokens: sentences of different lengths need \"<PAD>\" in the vocabulary");
  // Row by row, each row's words before its padding: the first problem is the one the run meets.
  CHECK(error_of(head + R"("vocab": ["I", "love"], "embedding": "randn",
      "input": {"text": ["I", "love robots"]}})") ==
        "model.json: input.text: sentences of different lengths need \"<PAD>\" in the vocabulary");
  CHECK(error_of(head + R"("vocab": ["I", "love"], "embedding": "randn",
      "input": {"text": ["I robots", "love"]}})") ==
        "model.json: input.text: unknown token \"robots\" and the vocabulary has no \"<UNK>\"");
  // A word found case-insensitively is known.
  CHECK(error_of(head + R"("vocab": ["I", "love"], "embedding": "randn", "input": {"text": "i LOVE"}})") == "");
}

TEST_CASE("a sentence from the command line is checked against the vocabulary with its origin", "[loader][errors]") {
  attn::LoadedModel m = attn::load_model_text(R"({"model": {"d_model": 2, "num_heads": 1}, "vocab": ["I", "love"],
      "embedding": "randn", "input": {"text": "I love"}, "encoder": "randn"})",
                                              "model.json");
  CHECK(attn_test::input_error_of([&] {
          attn::replace_source_text(m.model, m.input, "I love AI", "the command line");
        }) == "model.json: the command line: unknown token \"AI\" and the vocabulary has no \"<UNK>\"");
  attn::replace_source_text(m.model, m.input, "love I", "the command line");
  CHECK(m.input.source_tokens.texts == std::vector<std::string>{"love I"});
}

TEST_CASE("a duplicate vocab token is reported with both indices, in run and validate modes", "[loader][errors]") {
  const std::string text = R"({"model": {"d_model": 2, "num_heads": 1}, "vocab": ["a", "b", "a", "b", "a"],
      "embedding": "randn", "input": {"text": "a b"}, "encoder": "randn"})";
  CHECK(error_of(text) == "model.json: vocab[2]: duplicate token \"a\" (already vocab[0])");
  attn::LoadOptions options;
  options.collect_all_errors = true;
  std::vector<std::string> messages;
  try {
    attn::load_model_text(text, "model.json", options);
  } catch (const attn::InputErrors& e) {
    for (const auto& error : e.errors()) messages.push_back(error.what());
  }
  CHECK(messages == std::vector<std::string>{"model.json: vocab[2]: duplicate token \"a\" (already vocab[0])",
                                             "model.json: vocab[3]: duplicate token \"b\" (already vocab[1])",
                                             "model.json: vocab[4]: duplicate token \"a\" (already vocab[0])"});
}

TEST_CASE("a vocabulary of 100,000 tokens loads, and its last token's duplicate is found", "[loader][errors]") {
  // Checking each token against every earlier one took 15 s for this vocabulary.
  constexpr std::size_t kTokens = 100000;
  std::string vocab;
  for (std::size_t i = 0; i < kTokens; ++i) vocab += (i ? ", \"w" : "\"w") + std::to_string(i) + "\"";
  const auto model_text = [&](const std::string& extra_token) {
    return R"({"model": {"d_model": 2, "num_heads": 1}, "vocab": [)" + vocab + extra_token +
           R"(], "embedding": "zeros", "input": {"text": "w0 w99999"}, "encoder": "randn"})";
  };
  // (No timing here: speed belongs to benchmarks. Measured once: 12.9 s before, 0.16 s after.)
  const attn::LoadedModel m = attn::load_model_text(model_text(""), "model.json");
  CHECK(m.model.vocab.size() == kTokens);
  CHECK(m.model.vocab.find("w99999") == kTokens - 1);
  CHECK(m.model.embedding.shape == attn::Shape{kTokens, 2});
  CHECK(error_of(model_text(R"(, "w77777")")) ==
        "model.json: vocab[100000]: duplicate token \"w77777\" (already vocab[77777])");
}

TEST_CASE("validate lists at most 100 problems, then says it stopped", "[loader][errors]") {
  // 150 duplicate tokens: each is a problem of its own.
  std::string vocab = R"("a")";
  for (int i = 0; i < 150; ++i) vocab += R"(, "a")";
  attn::LoadOptions options;
  options.collect_all_errors = true;
  std::vector<std::string> messages;
  try {
    attn::load_model_text(R"({"model": {"d_model": 2, "num_heads": 1}, "vocab": [)" + vocab +
                              R"(], "embedding": "randn", "input": {"text": "a"}, "encoder": "randn"})",
                          "model.json", options);
  } catch (const attn::InputErrors& e) {
    for (const auto& error : e.errors()) messages.push_back(error.what());
  }
  REQUIRE(messages.size() == 101);
  CHECK(messages[0] == "model.json: vocab[1]: duplicate token \"a\" (already vocab[0])");
  CHECK(messages[99] == "model.json: vocab[100]: duplicate token \"a\" (already vocab[0])");
  CHECK(messages[100] == "model.json: more problems, not listed: validate stops after 100");
}

TEST_CASE("the variants' keys load with their defaults and their shapes", "[loader][variants]") {
  const attn::LoadedModel plain = attn::load_model_text(kValid, "model.json");
  CHECK(plain.model.config.norm == attn::Norm::LayerNorm);
  CHECK(plain.model.config.kv_heads() == 2);
  CHECK(plain.model.config.sliding_window == 0);
  CHECK(plain.model.config.rope_theta == 10000.0);
  // G = 1: W_k and W_v are (d_model, 1 * d_head); RMSNorm has no beta; SwiGLU has W_3.
  const attn::LoadedModel m = attn::load_model_text(R"({
    "model": {"d_model": 4, "num_heads": 2, "num_kv_heads": 1, "d_ff": 3, "norm": "rmsnorm",
              "activation": "swiglu", "positional_encoding": "rope", "rope_theta": 500, "causal": true,
              "sliding_window": 2},
    "input": {"X": [[1, 0, 1, 0], [0, 1, 1, 0]]},
    "encoder": "randn", "encoder_norm": {}})",
                                                    "model.json");
  CHECK(m.model.config.norm == attn::Norm::RMSNorm);
  CHECK(m.model.config.kv_heads() == 1);
  CHECK(m.model.config.rope_theta == 500.0);
  CHECK(m.model.config.sliding_window == 2);
  CHECK(m.model.encoder[0].attention.W_q.shape == attn::Shape{4, 4});
  CHECK(m.model.encoder[0].attention.W_k.shape == attn::Shape{4, 2});
  CHECK(m.model.encoder[0].attention.W_v.shape == attn::Shape{4, 2});
  CHECK(m.model.encoder[0].ffn.W_3.shape == attn::Shape{4, 3});
  CHECK(m.model.encoder[0].norm1.beta.data.empty());
  CHECK(m.model.encoder_norm.beta.data.empty());
  CHECK(m.model.encoder_norm.gamma.data == std::vector<double>{1, 1, 1, 1});
}

TEST_CASE("the variants' errors name the key, what was expected and what was found", "[loader][errors][variants]") {
  // Per-head matrices give every head its own keys: they cannot be grouped.
  CHECK(error_of(R"({"model": {"d_model": 4, "num_heads": 2, "num_kv_heads": 1}, "input": {"X": [[1,2,3,4]]},
      "encoder": [{"attention": {"heads": [{"W_q": "randn", "W_k": "randn", "W_v": "randn"},
                                          {"W_q": "randn", "W_k": "randn", "W_v": "randn"}]}}]})") ==
        "model.json: encoder[0].attention.heads: expected fused W_q, W_k, W_v with model.num_kv_heads = 1: per-head "
        "matrices give every head its own keys and values");
  CHECK(error_of(R"({"model": {"d_model": 4, "num_heads": 2, "num_kv_heads": 2, "d_ff": 3}, "input": {"X": [[1,2,3,4]]},
      "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn"},
                   "ffn": {"W_1": "randn", "W_2": "randn", "W_3": "randn"}}]})") ==
        "model.json: encoder[0].ffn.W_3: expected no W_3: only model.activation \"swiglu\" has an up projection (W_3)");
  CHECK(error_of(R"({"model": {"d_model": 4, "num_heads": 2, "d_ff": 3, "activation": "swiglu"},
      "input": {"X": [[1,2,3,4]]},
      "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn"},
                   "ffn": {"W_1": "randn", "b_1": "randn", "W_2": "randn", "W_3": "randn"}}]})") ==
        "model.json: encoder[0].ffn.b_1: expected no b_1 with model.activation \"swiglu\" (Llama's gate silu(x W_1) "
        "has no bias)");
  CHECK(error_of(R"({"model": {"d_model": 4, "num_heads": 2, "positional_encoding": "rope", "rope_theta": 0},
      "input": {"X": [[1,2,3,4]]}, "encoder": "randn"})") ==
        "model.json: model.rope_theta: expected a number > 0, found 0");
  CHECK(error_of(R"({"model": {"d_model": 4, "num_heads": 2, "norm": "batchnorm"}, "input": {"X": [[1,2,3,4]]},
      "encoder": "randn"})")
            .rfind("model.json: model.norm: expected one of \"layernorm\", \"rmsnorm\", found \"batchnorm\"", 0) == 0);
}
