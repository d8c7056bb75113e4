// What a JSON value a file wrote is, in the words of an error message's "found ...": one
// helper for every reader of JSON (the model file, Hugging Face's config.json and
// safetensors headers, tokenizer.json), each keeping its own wording.
#ifndef ATTN_CORE_JSON_FOUND_H_
#define ATTN_CORE_JSON_FOUND_H_

#include <cstddef>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace attn {

// A reader's wording of what it found.
struct JsonFoundWording {
  std::size_t longest_string;  // a string of more bytes than this is cut
  std::size_t cut_to;          // to its first cut_to bytes (of the text shown), then `ellipsis`
  const char* ellipsis;
  bool json_escaped;  // the string as JSON text, quotes and escapes included, else its bytes in quotes
  bool object_keys;   // "an object with 2 keys", else "an object"
  bool array_length;  // "an array of 3", else "an array"
  const char* other;  // a value of none of JSON's kinds (nlohmann's discarded or binary)
};

// "null", "true", "the number 4.5", "the string \"abc\"", "an array of 3", "an object with
// 2 keys", ... as `wording` says.
std::string describe_json_value(const nlohmann::json& value, const JsonFoundWording& wording);

}  // namespace attn

#endif  // ATTN_CORE_JSON_FOUND_H_
