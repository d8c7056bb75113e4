// A broken or hostile checkpoint folder ends in one InputError naming the file and the
// tensor or field, found before any weight is read (except a non-finite weight, found as
// it is read).
#include <chrono>
#include <limits>

#include <catch2/catch.hpp>

#include "arch/checkpoint.h"
#include "attn/error.h"
#include "checkpoint_test_files.h"

using attn_test::raw;
using attn_test::safetensors_bytes;
using attn_test::TempFolder;
using attn_test::write_bytes;

namespace {

// A GPT-2 of 1 layer, n_embd 4, 2 heads, n_inner 8, vocab 5, 3 positions, F32 weights all
// 0.25 (what they are does not matter here), with one tensor changed by `change`.
struct TinyTensor {
  std::string name, dtype = "F32";
  std::vector<std::size_t> shape;
};
const char* kTinyConfig =
    R"({"architectures": ["GPT2LMHeadModel"], "vocab_size": 5, "n_positions": 3, "n_embd": 4, "n_layer": 1,
        "n_head": 2, "n_inner": 8})";

std::vector<TinyTensor> tiny_gpt2_tensors() {
  return {{"wte.weight", "F32", {5, 4}},
          {"wpe.weight", "F32", {3, 4}},
          {"h.0.ln_1.weight", "F32", {4}},
          {"h.0.ln_1.bias", "F32", {4}},
          {"h.0.attn.c_attn.weight", "F32", {4, 12}},
          {"h.0.attn.c_attn.bias", "F32", {12}},
          {"h.0.attn.c_proj.weight", "F32", {4, 4}},
          {"h.0.attn.c_proj.bias", "F32", {4}},
          {"h.0.ln_2.weight", "F32", {4}},
          {"h.0.ln_2.bias", "F32", {4}},
          {"h.0.mlp.c_fc.weight", "F32", {4, 8}},
          {"h.0.mlp.c_fc.bias", "F32", {8}},
          {"h.0.mlp.c_proj.weight", "F32", {8, 4}},
          {"h.0.mlp.c_proj.bias", "F32", {4}},
          {"ln_f.weight", "F32", {4}},
          {"ln_f.bias", "F32", {4}}};
}

// Writes config.json and model.safetensors; `poison` names a tensor whose element 1 is NaN.
void write_tiny(const TempFolder& folder, const std::vector<TinyTensor>& tensors,
                const std::string& config = kTinyConfig, const std::string& poison = "") {
  std::string header = "{", data;
  for (const auto& t : tensors) {
    std::size_t n = 1;
    for (auto d : t.shape) n *= d;
    const std::size_t width = t.dtype == "F32" || t.dtype == "I32" ? 4 : 2;
    std::string bytes = t.dtype == "F32" ? raw(std::vector<float>(n, 0.25f)) : std::string(n * width, '\0');
    if (t.name == poison) {
      const float nan = std::numeric_limits<float>::quiet_NaN();
      std::memcpy(&bytes[4], &nan, 4);
    }
    std::string shape;
    for (auto d : t.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    header += (header.size() > 1 ? ", " : "") +
              ("\"" + t.name + "\": {\"dtype\": \"" + t.dtype + "\", \"shape\": [" + shape + "], \"data_offsets\": [" +
               std::to_string(data.size()) + ", " + std::to_string(data.size() + bytes.size()) + "]}");
    data += bytes;
  }
  write_bytes(folder.file("model.safetensors"), safetensors_bytes(header + "}", data));
  write_bytes(folder.file("config.json"), config);
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

}  // namespace

TEST_CASE("checkpoint folders: the tiny GPT-2 of the hostile tests loads as it is", "[checkpoint][hostile]") {
  TempFolder folder;
  write_tiny(folder, tiny_gpt2_tensors());
  const attn::CheckpointModel m = attn::load_hf_model(folder.path());
  CHECK(m.model.decoder.size() == 1);
  CHECK(m.model.decoder[0].self_attention.W_k.shape == attn::Shape{4, 4});
  CHECK(m.model.decoder[0].self_attention.W_k.data[0] == 0.25);
}

TEST_CASE("checkpoint folders: a missing or transposed weight is named", "[checkpoint][hostile]") {
  TempFolder folder;
  auto tensors = tiny_gpt2_tensors();
  tensors.erase(tensors.begin() + 12);  // h.0.mlp.c_proj.weight
  write_tiny(folder, tensors);
  attn::InputError e = load_error(folder.path());
  CHECK(e.file() == folder.file("model.safetensors"));
  CHECK(e.json_path() == "h.0.mlp.c_proj.weight");
  CHECK(e.message() == "missing: GPT2LMHeadModel needs it for decoder.0.ffn.W_2 (n_inner x n_embd)");

  tensors = tiny_gpt2_tensors();
  tensors[10].shape = {8, 4};  // h.0.mlp.c_fc.weight stored as nn.Linear would
  write_tiny(folder, tensors);
  e = load_error(folder.path());
  CHECK(e.json_path() == "h.0.mlp.c_fc.weight");
  CHECK(e.message() ==
        "expected shape [4, 8] (n_embd x n_inner), found [8, 4]: the transpose of what this "
        "architecture stores");

  tensors = tiny_gpt2_tensors();
  write_tiny(folder, tensors, R"({"architectures": ["GPT2LMHeadModel"], "vocab_size": 5, "n_positions": 3,
                                  "n_embd": 4, "n_layer": 1, "n_head": 2, "n_inner": 8, "tie_word_embeddings": false})");
  e = load_error(folder.path());
  CHECK(e.json_path() == "lm_head.weight");
  CHECK(e.message() == "missing: GPT2LMHeadModel needs it for output.W (vocab_size x n_embd)");
}

TEST_CASE("checkpoint folders: an integer weight is refused by its dtype", "[checkpoint][hostile]") {
  TempFolder folder;
  auto tensors = tiny_gpt2_tensors();
  tensors[2].dtype = "I32";  // h.0.ln_1.weight
  write_tiny(folder, tensors);
  const attn::InputError e = load_error(folder.path());
  CHECK(e.json_path() == "h.0.ln_1.weight");
  CHECK(e.message() == "dtype I32 is not supported: attn reads F64, F32, F16 and BF16");
}

TEST_CASE("checkpoint folders: NaN in a weight names the tensor and the element", "[checkpoint][hostile]") {
  TempFolder folder;
  write_tiny(folder, tiny_gpt2_tensors(), kTinyConfig, "h.0.attn.c_attn.weight");
  const attn::InputError e = load_error(folder.path());
  CHECK(e.file() == folder.file("model.safetensors"));
  CHECK(e.json_path() == "h.0.attn.c_attn.weight");
  CHECK(e.message() == "expected finite weights, found NaN at [0, 1]");
}

TEST_CASE("checkpoint folders: 10^9 layers are refused against --max-memory before any file is opened",
          "[checkpoint][hostile]") {
  TempFolder folder;  // a config alone: the weights are never looked for
  write_bytes(folder.file("config.json"),
              R"({"architectures": ["LlamaForCausalLM"], "vocab_size": 32000, "hidden_size": 64,
                  "intermediate_size": 128, "num_hidden_layers": 1000000000, "num_attention_heads": 4})");
  const auto start = std::chrono::steady_clock::now();
  const attn::InputError e = load_error(folder.path(), 1ULL << 30);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  CHECK(e.file() == folder.file("config.json"));
  CHECK(e.json_path() == "num_hidden_layers");
  CHECK(e.message().find("this model's weights alone would need about ") == 0);
  CHECK(e.message().find("layers=1000000000") != std::string::npos);
  CHECK(e.message().find("more than the limit of 1.0 GiB; use a smaller model or raise --max-memory") !=
        std::string::npos);
}

TEST_CASE("checkpoint folders: config problems and missing shards reach the loader as one line",
          "[checkpoint][hostile]") {
  TempFolder folder;
  write_tiny(folder, tiny_gpt2_tensors(),
             R"({"architectures": ["GPT2LMHeadModel"], "vocab_size": 1099511627776, "n_positions": 3, "n_embd": 4,
                 "n_layer": 1, "n_head": 2})");
  attn::InputError e = load_error(folder.path());
  CHECK(e.json_path() == "vocab_size");
  write_tiny(folder, tiny_gpt2_tensors(),
             R"({"architectures": ["GPT2LMHeadModel"], "vocab_size": 5, "n_positions": 3, "n_embd": 4,
                 "n_layer": 1, "n_head": 3})");
  e = load_error(folder.path());
  CHECK(e.json_path() == "n_head");
  CHECK(e.message() == "expected a divisor of n_embd = 4, found 3");
  write_tiny(folder, tiny_gpt2_tensors(), R"({"architectures": ["T5ForConditionalGeneration"]})");
  e = load_error(folder.path());
  CHECK(e.json_path() == "architectures[0]");
  // A sharded folder whose index names a shard that is not there
  TempFolder sharded;
  write_bytes(sharded.file("config.json"), kTinyConfig);
  write_bytes(sharded.file("model.safetensors.index.json"),
              R"({"weight_map": {"wte.weight": "model-00001-of-00002.safetensors"}})");
  e = load_error(sharded.path());
  CHECK(e.file() == sharded.file("model.safetensors.index.json"));
  CHECK(e.json_path() == "weight_map.wte.weight");
}

TEST_CASE("checkpoint folders: a path that is a file or does not exist", "[checkpoint][hostile]") {
  TempFolder folder;
  write_bytes(folder.file("model.safetensors"), "");
  CHECK(load_error(folder.file("model.safetensors")).message() ==
        "expected a model folder (config.json and model.safetensors) or a Hub name, found a file");
  CHECK(load_error(folder.file("missing")).message() ==
        "no such file or folder (expected a model folder or a Hub name such as gpt2)");
  // A folder with a config but a truncated weights file: the header's length alone is read.
  write_tiny(folder, tiny_gpt2_tensors());
  write_bytes(folder.file("model.safetensors"), std::string("\x10\x00\x00", 3));
  const attn::InputError e = load_error(folder.path());
  CHECK(e.file() == folder.file("model.safetensors"));
  CHECK(e.message() == "expected at least 8 bytes (the header's length), found 3");
}
