#include "tokenizers/json_fields.h"

#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "attn/error.h"
#include "core/json_found.h"
#include "core/memory_budget.h"
#include "core/read_files.h"

namespace attn {

namespace {

constexpr std::size_t kMaxDepth = 64;

// Where nesting passes kMaxDepth, if it does (brackets outside strings), so that a file of
// a million '[' is refused before the parser recurses into it.
std::optional<std::size_t> too_deep_at(const std::string& text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

}  // namespace

std::string read_tokenizer_file(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) throw InputError(path, "", "expected a tokenizer file, found no such file");
  if (S_ISDIR(info.st_mode)) throw InputError(path, "", "expected a tokenizer file, found a folder");
  if (static_cast<std::uint64_t>(info.st_size) > kMaxTokenizerFileBytes) {
    throw InputError(path, "",
                     "expected a tokenizer file of at most 256 MiB, found " + std::to_string(info.st_size) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "expected a readable tokenizer file, found one that cannot be opened");
  note_read_file(path);
  std::string text;
  text.reserve(static_cast<std::size_t>(info.st_size));
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    const auto got = static_cast<std::size_t>(in.gcount());
    // Tokenizer files are text: a NUL byte (a binary file, or /dev/zero behind a link) is
    // refused as it is read, not after reading 256 MiB of it.
    if (const void* nul = std::memchr(buffer, '\0', got))
      throw InputError(
          path, "",
          "expected a tokenizer file (text), found a NUL byte at byte " +
              std::to_string(text.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - buffer)));
    text.append(buffer, got);
    if (text.size() > kMaxTokenizerFileBytes)
      throw InputError(path, "", "expected a tokenizer file of at most 256 MiB, found more");
  }
  return text;
}

std::string read_json_text(const std::string& path) {
  std::string text = read_tokenizer_file(path);
  count_json_parse(path, "", text.data(), text.size());  // before the parser builds its document
  if (const auto at = too_deep_at(text)) {
    throw InputError(
        path, "", "expected JSON nested at most 64 levels deep, found deeper nesting at byte " + std::to_string(*at));
  }
  return text;
}

Json read_json_file(const std::string& path) { return parse_json_text(path, read_json_text(path)); }

Json parse_json_text(const std::string& path, const std::string& text) {
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is where the parser stopped: at the end of a truncated file, say so.
    const std::string where =
        e.byte >= text.size() ? ": the file ends early (truncated?)" : " at byte " + std::to_string(e.byte);
    throw InputError(path, "", "expected JSON, found a syntax error" + where);
  }
}

std::string describe_json_found(const Json& value) {
  // strings cut past 60 bytes; arrays and objects without their sizes
  static constexpr JsonFoundWording kWording{60, 60, "...", false, false, false, "a value of another kind"};
  return describe_json_value(value, kWording);
}

void JsonField::fail(const std::string& expected) const {
  throw InputError(file, path, "expected " + expected + ", found " + describe_json_found(value));
}

const Json& JsonField::object() const {
  if (!value.is_object()) fail("an object");
  return value;
}

const Json& JsonField::array() const {
  if (!value.is_array()) fail("an array");
  return value;
}

JsonField JsonField::operator[](const char* key) const {
  const Json& members = object();
  const auto it = members.find(key);
  const std::string member_path = path.empty() ? key : path + "." + key;
  if (it == members.end()) throw InputError(file, member_path, "expected a value, found none");
  return {*it, member_path, file};
}

JsonField JsonField::at(std::size_t index) const {
  const Json& items = array();
  if (index >= items.size()) fail("an array of more than " + std::to_string(index) + " elements");
  return {items[index], path + "[" + std::to_string(index) + "]", file};
}

bool JsonField::has(const char* key) const {
  const auto it = object().find(key);
  return it != value.end() && !it->is_null();
}

std::string JsonField::string() const {
  if (!value.is_string()) fail("a string");
  return value.get<std::string>();
}

bool JsonField::boolean() const {
  if (!value.is_boolean()) fail("true or false");
  return value.get<bool>();
}

std::uint64_t JsonField::count(std::uint64_t max) const {
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0))
    fail("a non-negative integer");
  const auto number = value.get<std::uint64_t>();
  if (number > max) fail("an integer at most " + std::to_string(max));
  return number;
}

bool JsonField::flag(const char* key, bool fallback) const { return has(key) ? (*this)[key].boolean() : fallback; }

}  // namespace attn
