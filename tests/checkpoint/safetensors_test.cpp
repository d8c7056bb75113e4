// The safetensors reader: each dtype read exactly, and every broken or hostile file refused
// in one InputError naming the file and the tensor or field, from the header alone.
#include "checkpoint/safetensors.h"

#include <chrono>
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint_test_files.h"

using attn_test::raw;
using attn_test::safetensors_bytes;
using attn_test::TempFolder;
using attn_test::write_bytes;

namespace {

// The InputError opening `bytes` as a safetensors file throws (REQUIREd to throw one).
attn::InputError open_error(const std::string& bytes) {
  TempFolder folder;
  const std::string path = folder.file("model.safetensors");
  write_bytes(path, bytes);
  try {
    attn::SafetensorsFile file(path);
  } catch (const attn::InputError& e) {
    CHECK(e.file() == path);
    return e;
  }
  FAIL("no InputError for " << bytes.substr(8, 200));
  return attn::InputError("", "", "");
}

std::vector<double> widened(const attn::SafetensorsFile& file, const std::string& name) {
  const attn::TensorView view = file.view(*file.find(name));
  std::vector<double> out(view.size());
  attn::widen_finite(view, file.path(), out.data());
  return out;
}

}  // namespace

TEST_CASE("safetensors: F64, F32, F16 and BF16 are read exactly as float64", "[checkpoint][safetensors]") {
  TempFolder folder;
  // F16 bits: 1.0, -2.0, the smallest subnormal 2^-24, the largest finite 65504, 0.1 rounded
  // to binary16 (0x2E66 = 1638/16384 = 0.0999755859375). BF16: 1.0, 3.140625 (0x4049), -0.5.
  const std::vector<std::uint16_t> f16 = {0x3C00, 0xC000, 0x0001, 0x7BFF, 0x2E66};
  const std::vector<std::uint16_t> bf16 = {0x3F80, 0x4049, 0xBF00};
  const std::vector<float> f32 = {0.1f, -3.5f};
  const std::vector<double> f64 = {0.1, -1e300};
  const std::string data = raw(f64) + raw(f32) + raw(f16) + raw(bf16) + std::string(2, '\0');
  const std::string header =
      R"({"__metadata__": {"format": "pt"}, "d": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]},)"
      R"( "f": {"dtype": "F32", "shape": [1, 2], "data_offsets": [16, 24]},)"
      R"( "h": {"dtype": "F16", "shape": [5], "data_offsets": [24, 34]},)"
      R"( "b": {"dtype": "BF16", "shape": [3], "data_offsets": [34, 40]},)"
      R"( "u": {"dtype": "U8", "shape": [2], "data_offsets": [40, 42]}}   )";  // padded with spaces, as writers may
  write_bytes(folder.file("w.safetensors"), safetensors_bytes(header, data));
  const attn::SafetensorsFile file(folder.file("w.safetensors"));
  REQUIRE(file.tensors().size() == 5);  // __metadata__ is not a tensor
  CHECK(widened(file, "d") == std::vector<double>{0.1, -1e300});
  CHECK(widened(file, "f") == std::vector<double>{0.100000001490116119384765625, -3.5});
  CHECK(widened(file, "h") == std::vector<double>{1.0, -2.0, std::ldexp(1.0, -24), 65504.0, 0.0999755859375});
  CHECK(widened(file, "b") == std::vector<double>{1.0, 3.140625, -0.5});
  CHECK(file.find("f")->shape == attn::Shape{1, 2});
  CHECK(file.find("missing") == nullptr);
  // An integer tensor is described but never read as a weight: refused by name.
  try {
    file.view(*file.find("u"));
    FAIL("U8 was viewed");
  } catch (const attn::InputError& e) {
    CHECK(e.json_path() == "u");
    CHECK(e.message() == "dtype U8 is not supported: attn reads F64, F32, F16 and BF16");
  }
}

TEST_CASE("safetensors: F16 and BF16 bit patterns widen exactly, every one", "[checkpoint][safetensors]") {
  // Every finite binary16 value is m · 2^(e-25) or m · 2^-24: check all 63488 finite
  // patterns against that formula computed independently in long double, and the specials.
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const int exponent = (bits >> 10) & 0x1f;
    const double v = attn::half_to_double(static_cast<std::uint16_t>(bits));
    if (exponent == 31) {
      CHECK(((bits & 0x3ff) ? std::isnan(v) : std::isinf(v)));
      continue;
    }
    const long double m = exponent ? (bits & 0x3ff) + 1024.0L : (bits & 0x3ff);
    long double expected = m * std::pow(2.0L, exponent ? exponent - 25 : -24);
    if (bits & 0x8000) expected = -expected;
    if (static_cast<double>(expected) != v) FAIL("F16 bits " << bits);
  }
  CHECK(attn::bfloat16_to_double(0x7F80) == std::numeric_limits<double>::infinity());
  CHECK(attn::bfloat16_to_double(0x0001) == std::ldexp(1.0, -133));  // the smallest subnormal
}

TEST_CASE("safetensors: a header length past the end of the file or 2^63 is refused", "[checkpoint][safetensors]") {
  const std::string header = R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})";
  attn::InputError e = open_error(safetensors_bytes(header, raw(std::vector<float>{1}), header.size() + 5));
  CHECK(e.json_path() == "header");
  CHECK(e.message() == "the header's length is " + std::to_string(header.size() + 5) +
                           " bytes, past the end of the file (" + std::to_string(header.size() + 4) +
                           " bytes after the length)");
  e = open_error(safetensors_bytes(header, "", 1ULL << 63));
  CHECK(e.message().find("the header's length is 9223372036854775808 bytes, past the end") == 0);
  e = open_error(std::string("\x05\0\0", 3));
  CHECK(e.message() == "expected at least 8 bytes (the header's length), found 3");
}

TEST_CASE("safetensors: a header that is not JSON is refused", "[checkpoint][safetensors]") {
  attn::InputError e = open_error(safetensors_bytes("{\"a\": {\"dtype\": ", ""));
  CHECK(e.json_path() == "header");
  CHECK(e.message().find("malformed JSON: ") == 0);
  e = open_error(safetensors_bytes("[1, 2]", ""));
  CHECK(e.message() == "expected a JSON object starting with '{' after the header's length");
  e = open_error(safetensors_bytes("{\"a\": " + std::string(100000, '[') + "}", ""));
  CHECK(e.message() == "expected JSON nested at most 8 levels deep");
  e = open_error(safetensors_bytes(R"({"a": {"dtype": "F32", "shape": [1]}})", ""));
  CHECK(e.json_path() == "a");
  CHECK(e.message() == "missing \"data_offsets\"");
}

TEST_CASE("safetensors: data offsets past the end, overlapping or leaving a gap are refused",
          "[checkpoint][safetensors]") {
  const std::string four = raw(std::vector<float>{1, 2, 3, 4});
  attn::InputError e = open_error(safetensors_bytes(
      R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})",
      four));
  CHECK(e.json_path() == "b");
  CHECK(e.message() == "data_offsets [8, 24] go past the end of the data (16 bytes)");
  e = open_error(safetensors_bytes(
      R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
      four));
  CHECK(e.json_path() == "b");
  CHECK(e.message() == "data_offsets [8, 16] overlap those of \"a\" [0, 12]");
  e = open_error(safetensors_bytes(
      R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
      four));
  CHECK(e.json_path() == "b");
  CHECK(e.message() == "data_offsets [8, 16] leave bytes 4 to 8 of the data covered by no tensor");
  e = open_error(safetensors_bytes(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", four));
  CHECK(e.json_path() == "data_offsets");
  CHECK(e.message() == "the tensors cover 8 bytes of data, but the file holds 16 after the header");
  e = open_error(safetensors_bytes(R"({"a": {"dtype": "F32", "shape": [0], "data_offsets": [8, 4]}})", four));
  CHECK(e.json_path() == "a.data_offsets");
  CHECK(e.message() == "expected begin <= end, found [8, 4]");
}

TEST_CASE("safetensors: a shape disagreeing with its byte span is refused", "[checkpoint][safetensors]") {
  const std::string four = raw(std::vector<float>{1, 2, 3, 4});
  attn::InputError e =
      open_error(safetensors_bytes(R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 16]}})", four));
  CHECK(e.json_path() == "w");
  CHECK(e.message() == "shape [2,3] of F32 needs 24 bytes, but data_offsets [0, 16] span 16");
  // A shape whose element count overflows 64 bits must not wrap around to the span.
  e = open_error(safetensors_bytes(
      R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 4], "data_offsets": [0, 16]}})", four));
  CHECK(e.message().find("needs more than 2^64 bytes") != std::string::npos);
}

TEST_CASE("safetensors: negative or non-integer dimensions are refused", "[checkpoint][safetensors]") {
  const std::string four = raw(std::vector<float>{1, 2, 3, 4});
  attn::InputError e =
      open_error(safetensors_bytes(R"({"w": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}})", four));
  CHECK(e.json_path() == "w.shape[0]");
  CHECK(e.message() == "expected a dimension >= 0, found the number -4");
  e = open_error(safetensors_bytes(R"({"w": {"dtype": "F32", "shape": [2, 2.0], "data_offsets": [0, 16]}})", four));
  CHECK(e.json_path() == "w.shape[1]");
  CHECK(e.message() == "expected a dimension (an integer >= 0), found the number 2.0");
  e = open_error(safetensors_bytes(R"({"w": {"dtype": "F32", "shape": "4", "data_offsets": [0, 16]}})", four));
  CHECK(e.json_path() == "w.shape");
}

TEST_CASE("safetensors: unknown and sub-byte dtypes are refused by name", "[checkpoint][safetensors]") {
  const std::string four = raw(std::vector<float>{1, 2, 3, 4});
  attn::InputError e =
      open_error(safetensors_bytes(R"({"w": {"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}})", four));
  CHECK(e.json_path() == "w.dtype");
  CHECK(e.message().find("unknown dtype \"F128\"") == 0);
  e = open_error(safetensors_bytes(R"({"w": {"dtype": "F4", "shape": [32], "data_offsets": [0, 16]}})", four));
  CHECK(e.message() == "dtype F4 is not supported: attn reads F64, F32, F16 and BF16");
}

TEST_CASE("safetensors: NaN or infinity in a weight is refused naming the tensor and element",
          "[checkpoint][safetensors]") {
  TempFolder folder;
  const std::vector<float> values = {1, 2, 3, std::numeric_limits<float>::quiet_NaN(), 5, 6};
  write_bytes(folder.file("w.safetensors"),
              safetensors_bytes(R"({"h.0.mlp.c_fc.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},)"
                                R"( "i": {"dtype": "F16", "shape": [1], "data_offsets": [24, 26]}})",
                                raw(values) + raw(std::vector<std::uint16_t>{0xFC00})));
  const attn::SafetensorsFile file(folder.file("w.safetensors"));  // opening reads no weight
  std::vector<double> out(6);
  try {
    attn::widen_finite(file.view(*file.find("h.0.mlp.c_fc.weight")), file.path(), out.data());
    FAIL("NaN accepted");
  } catch (const attn::InputError& e) {
    CHECK(e.file() == folder.file("w.safetensors"));
    CHECK(e.json_path() == "h.0.mlp.c_fc.weight");
    CHECK(e.message() == "expected finite weights, found NaN at [1, 0]");
  }
  try {
    attn::widen_finite(file.view(*file.find("i")), file.path(), out.data());
    FAIL("-inf accepted");
  } catch (const attn::InputError& e) {
    CHECK(e.message() == "expected finite weights, found -inf at [0]");
  }
}

TEST_CASE("safetensors: a broken header is refused without reading the weights", "[checkpoint][safetensors]") {
  // 8 GiB of data that is never written (a sparse file): the overlap is found from the
  // header alone, in well under a second, with nothing read or allocated.
  TempFolder folder;
  const std::string path = folder.file("model.safetensors");
  const std::string header =
      R"({"a": {"dtype": "F32", "shape": [1073741824], "data_offsets": [0, 4294967296]},)"
      R"( "b": {"dtype": "F32", "shape": [1073741824], "data_offsets": [4294967292, 8589934588]}})";
  write_bytes(path, safetensors_bytes(header, ""));
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(8 + header.size() + 8589934592ULL)) == 0);
  const auto start = std::chrono::steady_clock::now();
  try {
    attn::SafetensorsFile file(path);
    FAIL("overlap accepted");
  } catch (const attn::InputError& e) {
    CHECK(e.json_path() == "b");
    CHECK(e.message() == "data_offsets [4294967292, 8589934588] overlap those of \"a\" [0, 4294967296]");
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

TEST_CASE("sharded checkpoints: the index's weight_map finds each tensor in its shard", "[checkpoint][safetensors]") {
  TempFolder folder;
  write_bytes(folder.file("model-00001-of-00002.safetensors"),
              safetensors_bytes(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})",
                                raw(std::vector<float>{1.5f})));
  write_bytes(folder.file("model-00002-of-00002.safetensors"),
              safetensors_bytes(R"({"b": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}})",
                                raw(std::vector<double>{-2.25})));
  const std::string index = folder.file("model.safetensors.index.json");
  write_bytes(index, R"({"metadata": {"total_size": 12}, "weight_map": {"a": "model-00001-of-00002.safetensors",)"
                     R"( "b": "model-00002-of-00002.safetensors"}})");
  {
    const attn::CheckpointFiles files(folder.path());
    CHECK(files.names() == std::vector<std::string>{"a", "b"});
    const auto b = files.find("b");
    REQUIRE(b.tensor != nullptr);
    CHECK(b.file->view(*b.tensor)[0] == -2.25);
    CHECK(files.find("c").tensor == nullptr);
  }
  const auto refused = [&](const std::string& text, const std::string& path, const std::string& message) {
    write_bytes(index, text);
    try {
      attn::CheckpointFiles files(folder.path());
      FAIL("accepted " << text);
    } catch (const attn::InputError& e) {
      CHECK(e.file() == index);
      CHECK(e.json_path() == path);
      CHECK(e.message() == message);
    }
  };
  refused(R"({"weight_map": {"a": "model-00001-of-00003.safetensors"}})", "weight_map.a",
          "names the shard \"model-00001-of-00003.safetensors\", which is not in " + folder.path());
  refused(R"({"weight_map": {"c": "model-00001-of-00002.safetensors"}})", "weight_map.c",
          "the shard \"model-00001-of-00002.safetensors\" holds no tensor of that name");
  refused(R"({"weight_map": {"a": "../model-00001-of-00002.safetensors"}})", "weight_map.a",
          "expected a file name beside the index, found \"../model-00001-of-00002.safetensors\"");
  refused(R"({"metadata": {}})", "weight_map", "missing (tensor name -> shard file)");
  refused(R"({"weight_map": [1]})", "weight_map",
          "expected an object (tensor name -> shard file), found an array of 1");
}

TEST_CASE("a folder without safetensors weights is refused naming what was looked for", "[checkpoint][safetensors]") {
  TempFolder folder;
  try {
    attn::CheckpointFiles files(folder.path());
    FAIL("empty folder accepted");
  } catch (const attn::InputError& e) {
    CHECK(e.file() == folder.path());
    CHECK(e.message().find("found none of model.safetensors, model.safetensors.index.json, pytorch_model.bin and "
                           "pytorch_model.bin.index.json") == 0);
  }
}
