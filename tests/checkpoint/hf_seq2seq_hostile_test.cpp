// A Marian or BART folder attn cannot run ends in one InputError naming config.json's field
// or the missing tensor, found before any weight is read; the memory estimate from
// config.json counts the encoder's layers as well as the decoder's.
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "arch/checkpoint.h"
#include "attn/error.h"
#include "checkpoint/json_file.h"
#include "checkpoint_test_files.h"

using attn_test::TempFolder;
using attn_test::write_bytes;

namespace {

const std::string kDir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/hf_seq2seq/";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The tiny case `name` copied into `folder`, its config.json's fields changed by `changes`.
void write_case(const TempFolder& folder, const std::string& name, const attn::Json& changes) {
  write_bytes(folder.file("model.safetensors"), read_text(kDir + name + "/model.safetensors"));
  attn::Json config = attn::read_json_object_file(kDir + name + "/config.json");
  for (const auto& [key, value] : changes.items()) config[key] = value;
  write_bytes(folder.file("config.json"), config.dump());
}

attn::InputError load_error(const std::string& source, std::uint64_t max_memory = 0) {
  attn::LoadOptions options;
  options.max_memory_bytes = max_memory;
  try {
    attn::load_hf_model(source, options);
  } catch (const attn::InputError& e) {
    return e;
  }
  FAIL("loaded " << source);
  return attn::InputError("", "", "");
}

// The error of marian_f32 with `changes`, which must name config.json's `field`.
std::string config_error(const attn::Json& changes, const std::string& field, const char* name = "marian_f32") {
  TempFolder folder;
  write_case(folder, name, changes);
  const attn::InputError e = load_error(folder.path());
  CHECK(e.file() == folder.file("config.json"));
  CHECK(e.json_path() == field);
  return e.message();
}

}  // namespace

TEST_CASE("Marian and BART folders: what attn does not compute is refused by its config.json field",
          "[checkpoint][hostile][seq2seq]") {
  CHECK(config_error({{"decoder_attention_heads", 3}}, "decoder_attention_heads") ==
        "expected a divisor of d_model = 8, found 3");
  CHECK(config_error({{"share_encoder_decoder_embeddings", false}}, "share_encoder_decoder_embeddings") ==
        "false is not supported: attn reads one shared embedding table");
  CHECK(config_error({{"decoder_vocab_size", 20}}, "decoder_vocab_size") ==
        "expected vocab_size = 16 (attn reads one shared vocabulary)");
  CHECK(config_error({{"activation_function", "tanh"}}, "activation_function") ==
        "\"tanh\" is not supported (attn computes gelu, relu, swish, silu, gelu_new and gelu_pytorch_tanh)");
  CHECK(config_error({{"bad_words_ids", {{3, 4}}}}, "bad_words_ids") ==
        "expected lists of one token id from 0 to 15 (attn forbids single tokens), found an array of 2");
  CHECK(config_error({{"decoder_start_token_id", 16}}, "decoder_start_token_id") ==
        "expected token ids from 0 to 15, found the number 16");
  CHECK(config_error({{"encoder_attention_heads", 3}}, "encoder_attention_heads") ==
        "expected a divisor of d_model = 8, found 3");
  CHECK(config_error({{"tie_encoder_decoder", true}}, "tie_encoder_decoder", "bart_f32") ==
        "true is not supported: attn reads an encoder and a decoder of their own weights");
}

TEST_CASE("Marian and BART folders: a missing tensor is named with what needs it", "[checkpoint][hostile][seq2seq]") {
  TempFolder folder;
  write_case(folder, "marian_f32", {{"tie_word_embeddings", false}});
  attn::InputError e = load_error(folder.path());
  CHECK(e.file() == folder.file("model.safetensors"));
  CHECK(e.json_path() == "lm_head.weight");
  CHECK(e.message() == "missing: MarianMTModel needs it for output.W (vocab_size x d_model)");
  // BART's positions: (max_position_embeddings + 2) rows, of which row 2 is position 0
  write_case(folder, "bart_f32", {{"max_position_embeddings", 13}});
  e = load_error(folder.path());
  CHECK(e.json_path() == "model.encoder.embed_positions.weight");
  CHECK(e.message() == "expected shape [15, 8] ((max_position_embeddings + 2) x d_model), found [14, 8]");
  write_case(folder, "marian_f32", {{"decoder_layers", 3}});
  e = load_error(folder.path());
  CHECK(e.json_path() == "model.decoder.layers.2.self_attn.q_proj.weight");
}

TEST_CASE("Marian and BART folders: the estimate from config.json counts the encoder's layers",
          "[checkpoint][hostile][seq2seq][memory]") {
  // 100,000 encoder layers and one decoder layer of opus-mt's sizes: about 25 GB of weights,
  // refused against 1 GiB before any other file is opened (a decoder-only count would let
  // it through to the missing weights).
  TempFolder folder;
  write_bytes(folder.file("config.json"),
              R"({"architectures": ["MarianMTModel"], "vocab_size": 1000, "d_model": 512, "encoder_layers": 100000,
                  "decoder_layers": 1, "encoder_attention_heads": 8, "decoder_attention_heads": 8,
                  "encoder_ffn_dim": 2048, "decoder_ffn_dim": 2048, "max_position_embeddings": 512,
                  "pad_token_id": 999, "decoder_start_token_id": 999, "eos_token_id": 0})");
  const attn::InputError e = load_error(folder.path(), 1ULL << 30);
  CHECK(e.file() == folder.file("config.json"));
  CHECK(e.json_path() == "encoder_layers");
  CHECK(e.message().find("this model's weights alone would need about ") == 0);
  CHECK(e.message().find("layers=100000+1") != std::string::npos);
}
