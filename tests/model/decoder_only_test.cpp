// model.architecture "decoder-only": what the loader reads, how the model is labelled and
// named, and the one-line errors for files that do not fit the architecture.
#include <catch2/catch.hpp>

#include <algorithm>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/parameters.h"
#include "attn/trace.h"

namespace {

// The message load_model_text throws for `text`, or "" when it loads.
std::string error_of(const std::string& text) {
  try {
    attn::load_model_text(text, "gpt.json");
  } catch (const attn::InputError& e) {
    return e.what();
  }
  return "";
}

// A decoder-only file with `extra` members added at the top level and `model` members in
// the model section.
std::string gpt(const std::string& extra = "", const std::string& model = "",
                const std::string& decoder = R"("decoder": "randn")") {
  return R"({"model": {"architecture": "decoder-only", "d_model": 4, "num_heads": 2, "d_ff": 6, "num_layers": 2)" +
         model + R"(}, "vocab": ["<PAD>", "<BOS>", "a", "b"], "embedding": "randn",
    "input": {"text": "<BOS> a b"}, )" +
         decoder + R"(, "output": "tied")" + extra + "}";
}

}  // namespace

TEST_CASE("a decoder-only model has its layers under decoder, no encoder, no cross-attention", "[loader][gpt]") {
  const attn::LoadedModel m = attn::load_model_text(gpt(), "gpt.json");
  CHECK(m.model.decoder_only());
  CHECK(m.model.has_decoder());
  CHECK_FALSE(m.model.has_target());
  CHECK(m.model.encoder.empty());
  REQUIRE(m.model.decoder.size() == 2);
  CHECK(m.model.decoder[0].self_attention.W_q.shape == attn::Shape{4, 4});
  CHECK(m.model.decoder[0].cross_attention.W_q.data.empty());
  CHECK(m.model.decoder[0].ffn.W_1.shape == attn::Shape{4, 6});
  // Its parameters: per layer W_q, W_k, W_v, W_o (16 each), norm1 (8), W_1 and W_2 (24 each),
  // norm2 (8) = 128; the embedding 4 x 4 = 16; the head is tied.
  CHECK(attn::parameter_count(m.model) == 2 * 128 + 16);
  std::vector<std::string> names;
  for (const auto& p : attn::parameters(m.model)) names.push_back(attn::parameter_name(p.id));
  CHECK(names == std::vector<std::string>{"embedding",
                                          "decoder.0.self_attention.W_q",
                                          "decoder.0.self_attention.W_k",
                                          "decoder.0.self_attention.W_v",
                                          "decoder.0.self_attention.W_o",
                                          "decoder.0.norm1.gamma",
                                          "decoder.0.norm1.beta",
                                          "decoder.0.ffn.W_1",
                                          "decoder.0.ffn.W_2",
                                          "decoder.0.norm2.gamma",
                                          "decoder.0.norm2.beta",
                                          "decoder.1.self_attention.W_q",
                                          "decoder.1.self_attention.W_k",
                                          "decoder.1.self_attention.W_v",
                                          "decoder.1.self_attention.W_o",
                                          "decoder.1.norm1.gamma",
                                          "decoder.1.norm1.beta",
                                          "decoder.1.ffn.W_1",
                                          "decoder.1.ffn.W_2",
                                          "decoder.1.norm2.gamma",
                                          "decoder.1.norm2.beta"});
  CHECK(attn::parameters(m.model).size() == names.size());
}

TEST_CASE("a decoder-only run records the input, decoder.self_mask and decoder layers", "[forward][gpt]") {
  const attn::LoadedModel m = attn::load_model_text(gpt(), "gpt.json");
  attn::Trace trace(!m.input.batched);
  const attn::Tensor p = attn::run_model(m.model, m.input, trace);
  CHECK(p.shape == attn::Shape{1, 3, 4});
  std::vector<std::string> names;
  for (const auto& e : trace.entries()) names.push_back(e.name);
  const auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  CHECK(names.front() == "tokens.ids");
  CHECK(has("input"));
  CHECK(has("decoder.self_mask"));
  CHECK(has("decoder.0.self_attention.masked_scores"));
  CHECK(has("decoder.1.ffn.hidden"));
  CHECK(has("decoder.1.residual2"));
  CHECK(has("decoder.1.output"));
  CHECK(names.back() == "output.probabilities");
  CHECK_FALSE(has("target_input"));
  CHECK_FALSE(has("decoder.0.cross_attention.q"));
  // The causal mask: query 0 sees key 0 alone.
  const attn::TraceEntry* w = nullptr;
  for (const auto& e : trace.entries())
    if (e.name == "decoder.0.self_attention.weights") w = &e;
  REQUIRE(w);
  CHECK(w->tensor.shape == attn::Shape{2, 3, 3});  // (H, S, S), unbatched
  CHECK(w->tensor.data[0] == 1.0);
  CHECK(w->tensor.data[1] == 0.0);
  CHECK(w->tensor.data[2] == 0.0);
}

TEST_CASE("model.architecture, absent, is inferred from the stacks as before", "[loader][gpt]") {
  const attn::LoadedModel encoder = attn::load_model_text(R"({"model": {"d_model": 4, "num_heads": 2},
      "input": {"X": [[1, 0, 1, 0]]}, "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn"}}]})",
                                                          "m.json");
  CHECK(encoder.model.config.architecture == attn::Architecture::Encoder);
  CHECK_FALSE(encoder.model.decoder_only());
}

TEST_CASE("files that do not fit model.architecture get one clear line", "[loader][errors][gpt]") {
  CHECK(error_of(gpt(R"(, "encoder": "randn")")) ==
        "gpt.json: encoder: a decoder-only model (model.architecture) has no encoder: put its layers under "
        "\"decoder\"");
  CHECK(error_of(gpt("", R"(, "causal": false)")) ==
        "gpt.json: model.causal: expected true or nothing: a decoder-only model's self-attention is always causal, "
        "found false");
  CHECK(error_of(gpt("", "", R"("decoder": {"self_attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn",
      "W_o": "randn"}, "cross_attention": {}, "ffn": {"W_1": "randn", "W_2": "randn"}})")) ==
        "gpt.json: decoder.cross_attention: a decoder-only layer has no cross-attention (there is no encoder to "
        "attend to): its keys are self_attention, norm1, ffn, norm2");
  CHECK(error_of(R"({"model": {"architecture": "decoder-only", "d_model": 4, "num_heads": 2, "d_ff": 4},
      "vocab": ["a"], "embedding": "randn", "input": {"text": "a"}, "decoder": "randn"})") ==
        "gpt.json: output: missing: a decoder-only model predicts the next token, so it needs an output head "
        "(\"tied\" or {\"W\": ...})");
  CHECK(error_of(R"({"model": {"architecture": "decoder-only", "d_model": 4, "num_heads": 2, "d_ff": 4},
      "vocab": ["a"], "embedding": "randn", "input": {"text": "a", "target_text": "a"}, "decoder": "randn",
      "output": "tied"})") ==
        "gpt.json: input.target_text: a decoder-only model has no target: its input (text or tokens) is the text it "
        "continues");
  CHECK(error_of(R"({"model": {"architecture": "decoder-only", "d_model": 4, "num_heads": 2, "d_ff": 4},
      "vocab": ["a"], "embedding": "randn", "input": {"X": [[1, 2, 3, 4]]}, "decoder": "randn",
      "output": "tied"})") ==
        "gpt.json: input.X: a decoder-only model reads tokens: give input.text or input.tokens, found X (numbers)");
  CHECK(error_of(R"({"model": {"architecture": "encoder", "d_model": 4, "num_heads": 2, "d_ff": 4},
      "vocab": ["a", "<BOS>"], "embedding": "randn", "input": {"text": "a"}, "encoder": "randn", "decoder": "randn"})") ==
        "gpt.json: decoder: model.architecture is \"encoder\": expected no decoder");
  CHECK(error_of(R"({"model": {"architecture": "gpt", "d_model": 4, "num_heads": 2}, "input": {"X": [[1, 2, 3, 4]]},
      "encoder": "randn"})")
            .rfind("gpt.json: model.architecture: expected one of", 0) == 0);
  // A decoder and no encoder, without the architecture: the hint names it.
  CHECK(error_of(R"({"model": {"d_model": 4, "num_heads": 2, "d_ff": 4}, "vocab": ["a", "<BOS>"],
      "embedding": "randn", "input": {"text": "a"}, "decoder": "randn", "output": "tied"})") ==
        "gpt.json: encoder: missing (this field is required; a GPT-style model with its layers under \"decoder\" "
        "says model.architecture \"decoder-only\")");
}

TEST_CASE("prompt_template frames text from the command line as the model was trained", "[loader][gpt]") {
  attn::LoadedModel m = attn::load_model_text(gpt(R"(, "prompt_template": "<BOS> {} b")"), "gpt.json");
  CHECK(m.model.prompt_template == "<BOS> {} b");
  // the file's own input is read as written
  CHECK(m.input.source_tokens.texts == std::vector<std::string>{"<BOS> a b"});
  attn::replace_source_text(m.model, m.input, "a a", "text (command line)");
  CHECK(m.input.source_tokens.texts == std::vector<std::string>{"<BOS> a a b"});
  CHECK(m.input.source_tokens.notes ==
        std::vector<std::string>{"the text was framed as the model was trained (prompt_template \"<BOS> {} b\"): "
                                 "<BOS> a a b"});
  // a text already framed is kept as typed, with no note
  attn::replace_source_text(m.model, m.input, "<BOS> a b", "text (command line)");
  CHECK(m.input.source_tokens.texts == std::vector<std::string>{"<BOS> a b"});
  CHECK(m.input.source_tokens.notes.empty());
  // without a template, the text as typed
  attn::LoadedModel plain = attn::load_model_text(gpt(), "gpt.json");
  attn::replace_source_text(plain.model, plain.input, "a a", "text (command line)");
  CHECK(plain.input.source_tokens.texts == std::vector<std::string>{"a a"});
}

TEST_CASE("a bad prompt_template gets one line naming it", "[loader][errors][gpt]") {
  CHECK(error_of(gpt(R"(, "prompt_template": 3)")) ==
        "gpt.json: prompt_template: expected a string, found the number 3");
  CHECK(error_of(gpt(R"(, "prompt_template": "<BOS> a")")) ==
        "gpt.json: prompt_template: expected one \"{}\" where the text goes (\"<BOS> {} =\"), found 0 in \"<BOS> a\"");
  CHECK(error_of(gpt(R"(, "prompt_template": "{} <BOS> {}")")) ==
        "gpt.json: prompt_template: expected one \"{}\" where the text goes (\"<BOS> {} =\"), found 2 in "
        "\"{} <BOS> {}\"");
  CHECK(error_of(gpt(R"(, "prompt_template": "<BOS> {} =")")) ==
        "gpt.json: prompt_template: expected the tokens around \"{}\" in the vocab, found \"=\", which is not");
  CHECK(error_of(R"({"model": {"d_model": 4, "num_heads": 2, "d_ff": 4}, "vocab": ["a", "<BOS>"],
      "prompt_template": "<BOS> {}", "embedding": "randn", "input": {"text": "a"}, "encoder": "randn",
      "decoder": "randn", "output": "tied"})") ==
        "gpt.json: prompt_template: only for a decoder-only model (model.architecture \"decoder-only\"), whose text "
        "is a prompt to continue; remove it");
}
