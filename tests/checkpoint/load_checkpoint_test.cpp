// The load door with a Hugging Face checkpoint (load_checkpoint, attn/model_file.h): the
// weights and the tokenizer together, the embedding's rows named by the tokenizer's pieces
// ("<row N>" past them), Model::checkpoint, and a text encoded by the tokenizer.
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "attn/load_model.h"
#include "attn/model_file.h"
#include "checkpoint/checkpoint_test_files.h"

namespace {

const std::string kCases = std::string(ATTN_SOURCE_DIR) + "/tests/reference/hf_checkpoints/";

// llama_f32 (16 embedding rows, eos_token_id [2, 5]) with a GPT-2-style tokenizer of
// `tokens` single letters a, b, c, ... and no merges.
void write_folder(const attn_test::TempFolder& folder, int tokens) {
  for (const char* name : {"config.json", "generation_config.json", "model.safetensors"}) {
    std::ifstream in(kCases + "llama_f32/" + name, std::ios::binary);
    std::ofstream out(folder.file(name), std::ios::binary);
    out << in.rdbuf();
  }
  std::string vocab = "{";
  for (int i = 0; i < tokens; ++i)
    vocab += std::string(i ? ", " : "") + "\"" + static_cast<char>('a' + i) + "\": " + std::to_string(i);
  attn_test::write_bytes(folder.file("vocab.json"), vocab + "}");
  attn_test::write_bytes(folder.file("merges.txt"), "#version: 0.2\n");
}

}  // namespace

TEST_CASE("load_checkpoint: rows named by the tokenizer's pieces, <row N> past them", "[checkpoint][load]") {
  attn_test::TempFolder folder;
  write_folder(folder, 12);
  const attn::LoadedModel loaded = attn::load_checkpoint(folder.path());
  const attn::Model& model = loaded.model;
  REQUIRE(model.vocab.size() == 16);  // the embedding's rows
  CHECK(model.vocab.token(0) == "a");
  CHECK(model.vocab.token(11) == "l");
  CHECK(model.vocab.token(12) == "<row 12>");
  CHECK(model.vocab.token(15) == "<row 15>");
  CHECK(model.tokenizer->size() == 12);
  CHECK_FALSE(loaded.input.has_tokens());  // a checkpoint brings no input
  const attn::CheckpointSource& origin = model.checkpoint;
  CHECK(origin.present());
  CHECK(origin.folder == folder.path());
  CHECK(origin.architecture == "LlamaForCausalLM");
  CHECK(origin.eos_token_ids == std::vector<std::size_t>{2, 5});
  CHECK(origin.max_positions == 16);
  CHECK(origin.tokenizer_size == 12);
  CHECK(origin.tensor_names.at("decoder.1.self_attention.W_q") == "model.layers.1.self_attn.q_proj.weight.T");
  CHECK(attn::readable_token(model, std::size_t{13}) == "<row 13>");
}

TEST_CASE("load_checkpoint: a text is encoded by the tokenizer, an empty or too long one refused",
          "[checkpoint][load]") {
  attn_test::TempFolder folder;
  write_folder(folder, 12);
  attn::LoadedModel loaded = attn::load_checkpoint(folder.path());
  attn::replace_source_text(loaded.model, loaded.input, "abca", "text (command line)");
  REQUIRE(loaded.input.source_tokens.tokens.size() == 1);
  CHECK(loaded.input.source_tokens.tokens[0] == std::vector<std::string>{"a", "b", "c", "a"});
  CHECK_FALSE(loaded.input.batched);
  try {
    attn::replace_source_text(loaded.model, loaded.input, "", "text (command line)");
    FAIL("an empty text ran");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()) == "text (command line): expected a text to run, found an empty one");
  }
  try {
    attn::replace_source_text(loaded.model, loaded.input, std::string(17, 'a'), "text (command line)");
    FAIL("17 tokens ran on 16 positions");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()) ==
          "text (command line): expected at most 16 tokens (LlamaForCausalLM's positions), found 17");
  }
}

TEST_CASE("load_checkpoint: a tokenizer larger than the embedding is refused by name", "[checkpoint][load]") {
  attn_test::TempFolder folder;
  write_folder(folder, 20);
  try {
    attn::load_checkpoint(folder.path());
    FAIL("20 tokens loaded into 16 rows");
  } catch (const attn::InputError& e) {
    CHECK(e.file() == folder.path() + "/config.json");
    CHECK(e.json_path() == "vocab_size");
    CHECK(e.message() == "expected at least the tokenizer's 20 tokens (one embedding row each), found 16");
  }
}
