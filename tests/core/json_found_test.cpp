#include "core/json_found.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/json_file.h"
#include "model/json_reader.h"
#include "tokenizers/json_fields.h"

namespace {

using nlohmann::json;

// Each reader's wording, through the reader's own function: the model file's
// (model/json_reader.cpp), Hugging Face's files' (checkpoint/json_file.cpp) and
// tokenizer.json's (tokenizers/json_fields.cpp), as they were before they shared one helper.
enum Reader { kModel, kCheckpoint, kTokenizer };

std::string found(const json& value, Reader reader) {
  switch (reader) {
    case kModel:
      return attn::describe_json(value);
    case kCheckpoint:
      return attn::describe_config_value(value);
    default:
      return attn::describe_json_found(value);
  }
}

}  // namespace

TEST_CASE("every JSON reader names null, booleans and numbers alike", "[json_found]") {
  for (const Reader w : {kModel, kCheckpoint, kTokenizer}) {
    CHECK(found(json(nullptr), w) == "null");
    CHECK(found(json(true), w) == "true");
    CHECK(found(json(false), w) == "false");
    CHECK(found(json(-3), w) == "the number -3");
    CHECK(found(json(7u), w) == "the number 7");
    CHECK(found(json(4.5), w) == "the number 4.5");
  }
}

TEST_CASE("each JSON reader sizes arrays and objects in its own words", "[json_found]") {
  const json array = json::array({1, 2, 3}), one_key = {{"a", 1}}, two_keys = {{"a", 1}, {"b", 2}};
  CHECK(found(array, kModel) == "an array of 3");
  CHECK(found(array, kCheckpoint) == "an array of 3");
  CHECK(found(array, kTokenizer) == "an array");
  CHECK(found(one_key, kModel) == "an object with 1 key");
  CHECK(found(two_keys, kModel) == "an object with 2 keys");
  CHECK(found(two_keys, kCheckpoint) == "an object");
  CHECK(found(two_keys, kTokenizer) == "an object");
  CHECK(found(json(json::value_t::discarded), kModel) == "an unsupported JSON value");
  CHECK(found(json(json::value_t::discarded), kCheckpoint) == "null");
  CHECK(found(json(json::value_t::discarded), kTokenizer) == "a value of another kind");
}

TEST_CASE("each JSON reader cuts a long string where it always did", "[json_found]") {
  CHECK(found(json("a\"b"), kModel) == "the string \"a\"b\"");
  CHECK(found(json("a\"b"), kCheckpoint) == "the string \"a\\\"b\"");
  CHECK(found(json("a\"b"), kTokenizer) == "the string \"a\"b\"");
  // 40 bytes pass whole in the model file's wording; 41 keep 37 and "..."
  const std::string forty(40, 'x'), forty_one(41, 'x');
  CHECK(found(json(forty), kModel) == "the string \"" + forty + "\"");
  CHECK(found(json(forty_one), kModel) == "the string \"" + std::string(37, 'x') + "...\"");
  // 61 bytes: the tokenizer keeps 60 and "..."; the checkpoint 60 bytes of the JSON text
  // (its opening quote and 59 x) and "…", with no closing quote
  const std::string sixty(60, 'y'), sixty_one(61, 'y');
  CHECK(found(json(sixty), kTokenizer) == "the string \"" + sixty + "\"");
  CHECK(found(json(sixty_one), kTokenizer) == "the string \"" + sixty + "...\"");
  CHECK(found(json(sixty), kCheckpoint) == "the string \"" + sixty + "\"");
  CHECK(found(json(sixty_one), kCheckpoint) == "the string \"" + std::string(59, 'y') + "…");
}

TEST_CASE("describe_json_value follows the wording it is given", "[json_found]") {
  const attn::JsonFoundWording terse{3, 2, "~", false, false, false, "?"};
  CHECK(attn::describe_json_value(json("abcd"), terse) == "the string \"ab~\"");
  CHECK(attn::describe_json_value(json("abc"), terse) == "the string \"abc\"");
  CHECK(attn::describe_json_value(json(json::value_t::discarded), terse) == "?");
  const attn::JsonFoundWording counted{3, 2, "~", true, true, true, "?"};
  CHECK(attn::describe_json_value(json("abcd"), counted) == "the string \"a~");
  CHECK(attn::describe_json_value(json::array({1}), counted) == "an array of 1");
}
