#include "model/json_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include <catch2/catch.hpp>

#include "attn/model_file.h"
#include "error_message.h"

using attn_test::input_error_of;

TEST_CASE("json paths", "[json]") {
  CHECK(attn::json_child("", "model") == "model");
  CHECK(attn::json_child(attn::json_index("encoder", 0), "attention") == "encoder[0].attention");
}

TEST_CASE("did_you_mean finds typos and ignores unrelated words", "[json]") {
  CHECK(attn::did_you_mean("num_head", {"d_model", "num_heads", "d_head"}) == "num_heads");
  CHECK(attn::did_you_mean("W_Q", {"W_q", "W_k"}) == "W_q");
  CHECK(attn::did_you_mean("banana", {"d_model", "causal"}) == "");
}

TEST_CASE("reading a file that is missing or a directory", "[json][errors]") {
  try {
    attn::read_text_file("/nonexistent/model.json");
    FAIL("expected an error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()) == "/nonexistent/model.json: cannot open: no such file");
  }
  try {
    attn::read_text_file("/tmp");
    FAIL("expected an error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()) == "/tmp: expected a file, found a directory");
  }
}

TEST_CASE("choice lists the allowed values", "[json][errors]") {
  attn::JsonReader r("m.json");
  try {
    r.choice(attn::Json("rleu"), "model.activation", {"relu", "gelu"});
    FAIL("expected an error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()) ==
          "m.json: model.activation: expected one of \"relu\", \"gelu\", found \"rleu\"; did you mean \"relu\"?");
  }
}

TEST_CASE("files larger than the limit are refused before they are read", "[json][errors][limits]") {
  CHECK(attn::kMaxInputBytes == 256ULL * 1024 * 1024);
  char name[] = "/tmp/attn_json_reader_test_XXXXXX";
  const int fd = ::mkstemp(name);
  REQUIRE(fd >= 0);
  // A sparse file one byte over the default limit: its size is all stat() needs, and no
  // disk space is used.
  REQUIRE(::ftruncate(fd, static_cast<off_t>(attn::kMaxInputBytes + 1)) == 0);
  ::close(fd);
  CHECK(input_error_of([&] { attn::read_text_file(name); }) ==
        std::string(name) +
            ": expected a model file of at most 256 MiB, found 256.0 MiB (268435457 bytes); is this the right file?");
  REQUIRE(::truncate(name, 3 * 1024 * 1024 + 512 * 1024) == 0);
  CHECK(input_error_of([&] { attn::read_text_file(name, 1024 * 1024); }) ==
        std::string(name) +
            ": expected a model file of at most 1 MiB, found 3.5 MiB (3670016 bytes); is this the right file?");
  REQUIRE(::truncate(name, 11) == 0);
  CHECK(input_error_of([&] { attn::read_text_file(name, 10); }) ==
        std::string(name) + ": expected a model file of at most 10 bytes, found 11 bytes; is this the right file?");
  // Within the limit, the file is read, and its first NUL byte refused as it is read.
  CHECK(input_error_of([&] { attn::read_text_file(name, 11); }) ==
        std::string(name) + ": line 1, column 1: expected JSON text, found a NUL byte");
  std::remove(name);
}

TEST_CASE("a device with no size is read only up to the limit", "[json][errors][limits]") {
  // `yes` never ends: without the limit while reading, this would eat all memory.
  FILE* endless = ::popen("yes", "r");
  REQUIRE(endless != nullptr);
  const std::string path = "/dev/fd/" + std::to_string(::fileno(endless));
  CHECK(input_error_of([&] { attn::read_text_file(path, 100000); }) ==
        path + ": expected a model file of at most 97.7 KiB, found more than that; is this the right file?");
  ::pclose(endless);
  // /dev/zero is refused at its first byte, not read to the limit (256 MiB and seconds).
  CHECK(input_error_of([&] { attn::read_text_file("/dev/zero"); }) ==
        "/dev/zero: line 1, column 1: expected JSON text, found a NUL byte");
}

namespace {

// Runs read_text_file("-", max_bytes) with standard input reading `path` from `offset` on.
std::string read_stdin_from(const char* path, std::uint64_t max_bytes, off_t offset = 0) {
  const int saved = ::dup(STDIN_FILENO);
  const int fd = ::open(path, O_RDONLY);
  REQUIRE(fd >= 0);
  if (offset != 0) REQUIRE(::lseek(fd, offset, SEEK_SET) == offset);
  ::dup2(fd, STDIN_FILENO);
  ::close(fd);
  std::string result;
  try {
    result = attn::read_text_file("-", max_bytes);
  } catch (const attn::InputError& e) {
    result = std::string("error: ") + e.what();
  }
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  return result;
}

}  // namespace

TEST_CASE("a model file named - is standard input, read with the same limits and named <stdin>",
          "[json][errors][limits]") {
  char name[] = "/tmp/attn_json_reader_stdin_XXXXXX";
  const int fd = ::mkstemp(name);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, "{\"a\": [1, 2]}", 13) == 13);
  ::close(fd);
  CHECK(read_stdin_from(name, 100) == "{\"a\": [1, 2]}");
  // A redirected file is refused before reading when what is left of it is too big, and
  // only what is left counts.
  CHECK(read_stdin_from(name, 10) ==
        "error: <stdin>: expected a model file of at most 10 bytes, found 13 bytes; is this the right file?");
  CHECK(read_stdin_from(name, 10, 6) == "[1, 2]}");
  std::remove(name);
  // A device or a pipe is read only up to the limit.
  CHECK(read_stdin_from("/dev/zero", 100000) ==
        "error: <stdin>: line 1, column 1: expected JSON text, found a NUL byte");
  FILE* endless = ::popen("yes", "r");
  REQUIRE(endless != nullptr);
  CHECK(read_stdin_from(("/dev/fd/" + std::to_string(::fileno(endless))).c_str(), 100000) ==
        "error: <stdin>: expected a model file of at most 97.7 KiB, found more than that; is this the right file?");
  ::pclose(endless);
  CHECK(read_stdin_from("/dev/null", 100) == "");
  CHECK(attn::model_file_name("-") == "<stdin>");
  CHECK(attn::model_file_name("m.json") == "m.json");
}

TEST_CASE("JSON nested deeper than the limit is refused with its position", "[json][errors][limits]") {
  CHECK(attn::kMaxJsonDepth == 64);
  // 64 levels parse; the 65th '[' (column 65) is refused.
  CHECK(attn::parse_json(std::string(64, '[') + std::string(64, ']'), "deep.json").is_array());
  CHECK(input_error_of([&] { attn::parse_json(std::string(65, '[') + std::string(65, ']'), "deep.json"); }) ==
        "deep.json: line 1, column 65: expected JSON nested at most 64 levels deep, found deeper nesting of arrays or "
        "objects");
  // a million levels: refused at the same place, without parsing the rest
  CHECK(input_error_of([&] { attn::parse_json(std::string(1000000, '['), "deep.json"); }) ==
        "deep.json: line 1, column 65: expected JSON nested at most 64 levels deep, found deeper nesting of arrays or "
        "objects");
  // objects count too, and a smaller limit can be asked for; line and column are 1-based
  CHECK(input_error_of([&] { attn::parse_json("{\"a\":\n {\"b\": [1]}}", "m.json", 2); }) ==
        "m.json: line 2, column 8: expected JSON nested at most 2 levels deep, found deeper nesting of arrays or "
        "objects");
  // brackets inside strings (also after an escaped quote) are text, not nesting
  CHECK(attn::parse_json(R"({"comment": "[[[[\"[[[[", "x": [1]})", "m.json", 2)["x"][0] == 1);
}

TEST_CASE("a key named twice in one object is refused with its path", "[json][errors]") {
  CHECK(input_error_of([] { attn::parse_json(R"({"model": {"d_model": 4, "d_model": 8}})", "m.json"); }) ==
        "m.json: model.d_model: duplicate key \"d_model\": a JSON object names each key once");
  // inside arrays: the element's index is in the path
  CHECK(input_error_of([] {
          attn::parse_json(R"({"encoder": [{}, {"attention": {"W_q": 1, "W_k": 2, "W_q": 3}}]})", "m.json");
        }) == "m.json: encoder[1].attention.W_q: duplicate key \"W_q\": a JSON object names each key once");
  CHECK(input_error_of([] { attn::parse_json(R"([[1, 2], [3, {"a": 1, "b": [], "a": 2}]])", "m.json"); }) ==
        "m.json: [1][1].a: duplicate key \"a\": a JSON object names each key once");
  // the same key in two objects is fine
  CHECK(input_error_of([] { attn::parse_json(R"([{"a": 1}, {"a": 2}, {"b": {"a": 3}}])", "m.json"); }).empty());
}

TEST_CASE("a NUL byte is refused with its position, not taken for the end", "[json][errors]") {
  // nlohmann's parser stops at a NUL: whatever follows would be ignored.
  const std::string text = std::string("{\"model\": 1}\n\0{\"more\": 2}", 24);
  CHECK(input_error_of([&] { attn::parse_json(text, "m.json"); }) ==
        "m.json: line 2, column 1: expected JSON text, found a NUL byte");
}

TEST_CASE("a document whose parsed form would not fit in the memory limit is refused before parsing",
          "[json][errors][limits]") {
  // 100,000 empty arrays in one: 300 KB of text. Parsed: 16 bytes per value (100,000) and
  // 64 per container (100,001): 8,000,064 bytes = 7.6 MiB.
  std::string text = "[";
  for (int i = 0; i < 100000; ++i) text += i ? ",[]" : "[]";
  text += "]";
  CHECK(input_error_of([&] { attn::parse_json(text, "m.json", attn::kMaxJsonDepth, 4 << 20); }) ==
        "m.json: reading this file would need about 7.6 MiB (100000 JSON values), more than the limit of 4.0 MiB; is "
        "this the right file?");
  CHECK(attn::parse_json(text, "m.json", attn::kMaxJsonDepth, 16 << 20).size() == 100000);
}
