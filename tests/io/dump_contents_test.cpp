// What a dump holds (io/dump.cpp): the .npz's arrays, dtypes and metadata, every parameter
// under its model-file path, a variant model's tensors. The JSON dump's text, its files and
// its errors are tests/io/dump_test.cpp's.
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "attn/dump.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/parameters.h"
#include "model/examples.h"
#include "model/json_reader.h"
#include "trace_lookup.h"

namespace {
attn::LoadedModel small_model(bool causal) {
  return attn::load_model_text(
      std::string(R"({"model": {"d_model": 2, "num_heads": 1, "causal": )") + (causal ? "true" : "false") + R"(},
      "input": {"X": [[[0.1, 0.2], [0.3, 0.4]]]},
      "encoder": [{"attention": {"W_q": "identity", "W_k": "identity", "W_v": "identity", "W_o": "identity"}}]})",
      "small.json");
}
}  // namespace

TEST_CASE("a .npz dump holds one array per trace entry", "[dump][npz]") {
  const attn::LoadedModel model = small_model(false);
  attn::Trace trace;
  attn::run_model(model.model, model.input, trace);
  attn::StringOutput out;
  attn::TraceDump dump(out, attn::DumpFormat::Npz, model.model, model.input);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
  // every entry's file name appears in a local header, in order
  std::size_t at = 0;
  for (const auto& e : trace.entries()) {
    at = out.text.find(e.name + ".npy", at);
    REQUIRE(at != std::string::npos);
  }
  // then the metadata, last
  CHECK(out.text.find("__meta__.json", at) != std::string::npos);
}

TEST_CASE("the .npz holds token ids as int64, padding masks as bool, and the JSON's metadata", "[dump][npz]") {
  // Two sentences of different lengths: ids, a padding mask, an additive mask.
  const attn::LoadedModel model = attn::load_model_text(attn::find_example("padded_batch").json, "padded_batch");
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  attn::StringOutput out;
  attn::TraceDump dump(out, attn::DumpFormat::Npz, model.model, model.input);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
  // tokens.ids: '<i8', its values as little-endian int64 after the 64-byte header
  // (where an array's .npy header starts, and where its data does)
  const auto array_at = [&](const std::string& name) {
    const std::size_t at = out.text.find(name + ".npy");
    REQUIRE(at != std::string::npos);
    const std::size_t header = out.text.find("\x93NUMPY", at);
    const auto length =
        static_cast<unsigned char>(out.text[header + 8]) + 256 * static_cast<unsigned char>(out.text[header + 9]);
    return std::pair{header, header + 10 + length};
  };
  const auto [ids, id_data] = array_at("tokens.ids");
  CHECK(out.text.substr(ids + 10, 59) == "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }");
  const auto& id_values = find_entry(trace, "tokens.ids")->tensor.data;
  for (std::size_t i = 0; i < 6; ++i) {
    std::int64_t id = -1;
    std::memcpy(&id, out.text.data() + id_data + 8 * i, 8);
    CHECK(static_cast<double>(id) == id_values[i]);
  }
  // tokens.padding_mask: '|b1', one byte each, 1 at the padded position
  const auto [mask, mask_data] = array_at("tokens.padding_mask");
  CHECK(out.text.substr(mask + 10, 59) == "{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }");
  CHECK(out.text.substr(mask_data, 6) == std::string("\0\0\0\0\0\1", 6));
  // the metadata: the JSON dump's keys, each tensor's dtype
  const std::size_t meta = out.text.find("__meta__.json");
  const std::size_t meta_start = out.text.find("{\"format\"", meta);
  REQUIRE(meta_start != std::string::npos);
  const attn::Json doc =
      attn::Json::parse(out.text.substr(meta_start, out.text.find("}\n", meta_start) + 2 - meta_start));
  CHECK(doc["format"] == "attn-trace");
  CHECK(doc["model"]["vocab_size"] == 7);
  CHECK(doc["tokens"]["source"] == attn::Json::parse(R"([["I", "love", "AI"], ["you", "too", "<PAD>"]])"));
  REQUIRE(doc["tensors"].size() == trace.entries().size());
  CHECK(doc["tensors"][0] ==
        attn::Json::parse(R"({"name": "tokens.ids", "shape": [2, 3], "axes": ["B", "S"], "dtype": "int64"})"));
  std::size_t additive = 0;
  for (const auto& t : doc["tensors"])
    if (t["name"] == "encoder.mask") additive += t["dtype"] == "float64";  // 0 and -inf, added to the scores
  CHECK(additive == 1);
}

TEST_CASE("the dump holds every parameter under its model-file path", "[dump][parameters]") {
  // Seed 004's W_q, the built-in model's numbers: encoder.0.attention.W_q row 0 is [0.1, 0.2, 0.3, 0.4].
  const attn::LoadedModel model =
      attn::load_model_file(std::string(ATTN_SOURCE_DIR) + "/data/examples/seed004_i_love_ai.json");
  attn::Trace trace;
  attn::run_model(model.model, model.input, trace);
  std::ostringstream out;
  attn::write_trace_json(out, trace, model.model, model.input);
  // The decoder's masked scores hold -Infinity, which Python reads and nlohmann does not.
  std::string text = out.str();
  for (std::size_t at; (at = text.find("-Infinity")) != std::string::npos;) text.replace(at, 9, "null");
  const attn::Json doc = attn::Json::parse(text);
  // The tensors are unchanged: the parameters come after them, in a list of their own.
  REQUIRE(doc["tensors"].size() == trace.entries().size());
  std::map<std::string, attn::Json> parameters;
  for (const auto& p : doc["parameters"]) parameters[p["name"].get<std::string>()] = p;
  CHECK(parameters["encoder.0.attention.W_q"]["data"][0] == attn::Json::array({0.1, 0.2, 0.3, 0.4}));
  CHECK(parameters["encoder.0.attention.W_q"]["axes"] == attn::Json::array({"N", "H*d"}));
  CHECK(parameters["encoder.0.ffn.W_1"]["shape"] == attn::Json::array({4, 8}));
  CHECK(parameters["encoder.0.norm1.gamma"]["data"] == attn::Json::array({1.0, 1.0, 1.0, 1.0}));
  CHECK(parameters["decoder.0.cross_attention.W_o"]["shape"] == attn::Json::array({4, 4}));
  CHECK(parameters["decoder.0.norm3.beta"]["shape"] == attn::Json::array({4}));
  CHECK(parameters["embedding"]["data"][3] == attn::Json::array({0.5, 0.1, 0.8, 0.2}));  // "love"
  // The count validate prints is the dump's numbers added up.
  std::size_t numbers = 0;
  for (const auto& [name, p] : parameters) {
    std::size_t n = 1;
    for (const auto& d : p["shape"]) n *= d.get<std::size_t>();
    numbers += n;
  }
  CHECK(numbers == attn::parameter_count(model.model));
  // In a .npz, one array each after the trace's.
  attn::StringOutput npz;
  attn::TraceDump dump(npz, attn::DumpFormat::Npz, model.model, model.input);
  for (const auto& e : trace.entries()) dump.add(e.record());
  dump.finish(trace);
  CHECK(npz.text.find("encoder.0.ffn.W_1.npy") != std::string::npos);
  CHECK(npz.text.find("decoder.0.norm2.gamma.npy") != std::string::npos);
  // and listed in __meta__.json after the tensors, with their axes and type
  CHECK(npz.text.find(R"("parameters": [{"name":"embedding","shape":[)") != std::string::npos);
  CHECK(npz.text.find(R"({"name":"encoder.0.attention.W_q","shape":[4,4],"axes":["N","H*d"],"dtype":"float64"})") !=
        std::string::npos);
}

TEST_CASE("a variant model's dump names its variants and their tensors", "[dump][variants]") {
  const attn::LoadedModel model = attn::load_model_text(attn::find_example("llama_block").json, "llama_block");
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  std::ostringstream out;
  attn::write_trace_json(out, trace, model.model, model.input);
  // The masks' -Infinity is Python's JSON, not nlohmann's: read as a large number here.
  std::string text = out.str();
  for (std::size_t at = text.find("-Infinity"); at != std::string::npos; at = text.find("-Infinity", at))
    text.replace(at, 9, "-1e308");
  const attn::Json doc = attn::Json::parse(text);
  CHECK(doc["model"]["norm"] == "rmsnorm");
  CHECK(doc["model"]["activation"] == "swiglu");
  CHECK(doc["model"]["positional_encoding"] == "rope");
  CHECK(doc["model"]["rope_theta"] == 10000.0);
  CHECK(doc["model"]["num_kv_heads"] == 1);
  CHECK(doc["model"]["sliding_window"] == 4);
  std::vector<std::string> names;
  for (const auto& t : doc["tensors"]) names.push_back(t["name"].get<std::string>());
  for (const char* name : {"decoder.0.self_attention.q_rope", "decoder.0.self_attention.k_rope",
                           "decoder.0.self_attention.k_repeat", "decoder.0.self_attention.v_repeat"})
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  std::size_t k_heads = 0;
  for (const auto& t : doc["tensors"])
    if (t["name"] == "decoder.0.self_attention.k_heads") {
      CHECK(t["axes"] == attn::Json::array({"G", "S", "d"}));
      ++k_heads;
    }
  CHECK(k_heads == 1);
  // The paper's models keep their keys: none of the variants' appears.
  const attn::LoadedModel plain = small_model(false);
  attn::Trace plain_trace;
  attn::run_model(plain.model, plain.input, plain_trace);
  std::ostringstream plain_out;
  attn::write_trace_json(plain_out, plain_trace, plain.model, plain.input);
  const attn::Json plain_doc = attn::Json::parse(plain_out.str());
  for (const char* key : {"norm", "rope_theta", "num_kv_heads", "sliding_window"})
    CHECK_FALSE(plain_doc["model"].contains(key));
}
