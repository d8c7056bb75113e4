// Reading the tokenizer files' JSON with errors that name the file, the JSON path
// (model.merges[17]), what was expected and what was found.
#ifndef ATTN_TOKENIZERS_JSON_FIELDS_H_
#define ATTN_TOKENIZERS_JSON_FIELDS_H_

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace attn {

using Json = nlohmann::json;

// Tokenizer files larger than this are refused before they are read (the largest real
// tokenizer.json files are tens of MiB).
constexpr std::uint64_t kMaxTokenizerFileBytes = 256ULL << 20;

// The file's bytes; InputError if it is missing, a folder, unreadable or too large.
std::string read_tokenizer_file(const std::string& path);
// The file parsed as JSON; InputError for a syntax error (truncated files among them) or
// nesting deeper than 64 levels.
Json read_json_file(const std::string& path);
// read_json_file in two: the file's text, read, counted against the memory limit and
// checked for depth; then its document (InputError naming a syntax error).
std::string read_json_text(const std::string& path);
Json parse_json_text(const std::string& path, const std::string& text);

// A JSON value with where it is, for messages.
struct JsonField {
  const Json& value;
  std::string path;
  const std::string& file;

  // The member `key` (InputError if absent, or if this is not an object).
  JsonField operator[](const char* key) const;
  JsonField at(std::size_t index) const;
  bool has(const char* key) const;  // present and not null
  bool is_null() const { return value.is_null(); }

  const Json& object() const;  // InputError unless an object
  const Json& array() const;   // InputError unless an array
  std::string string() const;
  bool boolean() const;
  std::uint64_t count(std::uint64_t max) const;  // a non-negative integer <= max
  // An optional boolean member, `fallback` when absent or null.
  bool flag(const char* key, bool fallback) const;

  [[noreturn]] void fail(const std::string& expected) const;  // "expected X, found <what is here>"
};

// How a found value reads in a message: "the string \"Unigram\"", "the number 3", "null".
std::string describe_json_found(const Json& value);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_JSON_FIELDS_H_
