#include "model/json_reader.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "core/json_duplicate_keys.h"
#include "core/json_found.h"
#include "core/read_files.h"
#include "model/byte_size.h"

namespace attn {

namespace {

// "256 MiB", "1.5 KiB", "12 bytes".
std::string file_size_text(std::uint64_t bytes) { return byte_size_text(static_cast<double>(bytes), ByteStyle::File); }

}  // namespace

std::string exact_bytes(std::uint64_t bytes) {
  return bytes < 1024 ? file_size_text(bytes) : fmt::format("{} ({} bytes)", file_size_text(bytes), bytes);
}

void too_large(const std::string& path, const std::string& found, std::uint64_t max_bytes, const char* what) {
  throw InputError(path, "",
                   fmt::format("expected {} of at most {}, found {}; is this the right file?", what,
                               file_size_text(max_bytes), found));
}

namespace {

// Line and column (1-based) of byte offset `pos` in `text`.
std::pair<std::size_t, std::size_t> line_and_column(const std::string& text, std::size_t pos) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// JSON text never holds a NUL byte: one is refused as it is read (/dev/zero, a binary file),
// at the line and column parse_json would name, not after reading on to the limit. `text`
// ends with the chunk just read, of `got` bytes.
void refuse_nul(const std::string& path, const std::string& text, std::size_t got) {
  const std::size_t chunk = text.size() - got;
  const auto* nul = static_cast<const char*>(std::memchr(text.data() + chunk, '\0', got));
  if (!nul) return;
  const auto [line, column] = line_and_column(text, static_cast<std::size_t>(nul - text.data()));
  throw InputError(path, "", fmt::format("line {}, column {}: expected JSON text, found a NUL byte", line, column));
}

// Standard input, read in chunks up to the limit: a pipe has no size to check in advance,
// and a regular file redirected to it (< model.json) is refused before reading when the
// part left to read is too big.
std::string read_standard_input(std::uint64_t max_bytes, const char* what) {
  const std::string name = kStandardInputName;
  struct stat info {};
  if (::fstat(STDIN_FILENO, &info) != 0) throw InputError(name, "", "cannot read: standard input is closed");
  if (S_ISDIR(info.st_mode)) throw InputError(name, "", "expected a file, found a directory");
  if (S_ISREG(info.st_mode)) {
    const off_t at = ::lseek(STDIN_FILENO, 0, SEEK_CUR);
    const auto left = static_cast<std::uint64_t>(info.st_size - (at > 0 && at <= info.st_size ? at : 0));
    if (left > max_bytes) too_large(name, exact_bytes(left), max_bytes, what);
  }
  note_read_file(STDIN_FILENO, name);  // < model.json: a file that no output may replace
  std::string text;
  std::vector<char> chunk(1 << 16);
  for (;;) {
    const ssize_t got = ::read(STDIN_FILENO, chunk.data(), chunk.size());
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      throw InputError(name, "", std::string("read error: ") + std::strerror(errno));
    }
    if (text.size() + static_cast<std::uint64_t>(got) > max_bytes) too_large(name, "more than that", max_bytes, what);
    text.append(chunk.data(), static_cast<std::size_t>(got));
    refuse_nul(name, text, static_cast<std::size_t>(got));
  }
  return text;
}

}  // namespace

std::string read_text_file(const std::string& path, std::uint64_t max_bytes, const char* what) {
  if (path == "-") return read_standard_input(max_bytes, what);
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw InputError(path, "", "cannot open: no such file");
  if (S_ISDIR(info.st_mode)) throw InputError(path, "", "expected a file, found a directory");
  // A regular file's size is known: refuse before reading a byte.
  if (S_ISREG(info.st_mode) && static_cast<std::uint64_t>(info.st_size) > max_bytes)
    too_large(path, exact_bytes(static_cast<std::uint64_t>(info.st_size)), max_bytes, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open for reading");
  note_read_file(path);
  // Read in chunks up to the limit: a device or a pipe (-c /dev/zero, -c <(...)) has no
  // size to check in advance, and must not be read without end.
  std::string text;
  std::vector<char> chunk(1 << 16);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (text.size() + got > max_bytes) too_large(path, "more than that", max_bytes, what);
    text.append(chunk.data(), got);
    refuse_nul(path, text, got);
  }
  if (in.bad()) throw InputError(path, "", "read error");
  return text;
}

namespace {

// nlohmann's message without its "[json.exception.parse_error.101] parse error at line 1,
// column 2: " prefix; what is left says what was wrong.
std::string parse_error_reason(const std::string& what) {
  std::string reason = what;
  const auto colon = reason.find(": ");
  if (reason.rfind("[json.exception", 0) == 0 && colon != std::string::npos) reason = reason.substr(colon + 2);
  return reason;
}

// What one pass over the text finds before the parser runs: where nesting first goes
// deeper than allowed, where a NUL byte is (the parser would stop there and ignore what
// follows), and how many values and members the document holds, for the memory the parsed
// document will take. Brackets inside strings do not count; the text need not be valid
// JSON (the parser reports that afterwards).
struct TextScan {
  std::size_t too_deep_at = std::string::npos;
  std::size_t nul_at = std::string::npos;
  std::uint64_t values = 1;   // a document holds at most one value more than its commas and colons
  std::uint64_t members = 0;  // object members (colons)
  std::uint64_t containers = 0;
  std::uint64_t string_bytes = 0;
};

TextScan scan_text(const std::string& text, std::size_t max_depth) {
  TextScan scan;
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0' && scan.nul_at == std::string::npos) scan.nul_at = i;
    if (in_string) {
      ++scan.string_bytes;
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      ++scan.containers;
      if (++depth > max_depth && scan.too_deep_at == std::string::npos) scan.too_deep_at = i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',') {
      ++scan.values;
    } else if (c == ':') {
      ++scan.members;
    }
  }
  return scan;
}

// The bytes nlohmann's document takes, from above: 16 per value, a vector or a map per
// container, a map node and a key per member, the characters of every string. "[]," is
// three bytes of text and about 100 of memory: a 250 MB file of them would take 6 GB.
std::uint64_t parsed_bytes(const TextScan& scan) {
  return 16 * (scan.values + scan.members) + 64 * scan.containers + 96 * scan.members + 2 * scan.string_bytes;
}

}  // namespace

Json parse_json(const std::string& text, const std::string& file, std::size_t max_depth, std::uint64_t memory_limit) {
  const TextScan scan = scan_text(text, max_depth);
  // nlohmann's parser is not recursive, but deep documents still cost memory and every
  // recursive walk over them (the loader's, dump()) would risk the stack.
  if (scan.too_deep_at != std::string::npos) {
    const auto [line, column] = line_and_column(text, scan.too_deep_at);
    throw InputError(file, "",
                     fmt::format("line {}, column {}: expected JSON nested at most {} levels deep, found "
                                 "deeper nesting of arrays or objects",
                                 line, column, max_depth));
  }
  if (scan.nul_at != std::string::npos) {
    const auto [line, column] = line_and_column(text, scan.nul_at);
    throw InputError(file, "", fmt::format("line {}, column {}: expected JSON text, found a NUL byte", line, column));
  }
  if (memory_limit != 0 && parsed_bytes(scan) > memory_limit)
    throw InputError(
        file, "",
        fmt::format("reading this file would need about {} ({} JSON values), more than the limit of "
                    "{}; is this the right file?",
                    byte_size_text(static_cast<double>(parsed_bytes(scan)), ByteStyle::Memory),
                    scan.values + scan.members, byte_size_text(static_cast<double>(memory_limit), ByteStyle::Memory)));
  try {
    refuse_duplicate_keys(text, file);
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.byte is one past the offending character.
    const auto [line, column] = line_and_column(text, e.byte == 0 ? 0 : e.byte - 1);
    throw InputError(
        file, "", fmt::format("malformed JSON at line {}, column {}: {}", line, column, parse_error_reason(e.what())));
  } catch (const Json::out_of_range& e) {
    // "number overflow parsing '1e999'": a number no float64 can hold. nlohmann gives no
    // position, so find the literal in the text.
    const std::string what = e.what();
    const auto open = what.find('\''), close = what.rfind('\'');
    const std::string literal =
        open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : "";
    const std::size_t pos = literal.empty() ? std::string::npos : text.find(literal);
    if (pos == std::string::npos) throw InputError(file, "", "malformed JSON: " + parse_error_reason(what));
    const auto [line, column] = line_and_column(text, pos);
    throw InputError(file, "",
                     fmt::format("line {}, column {}: expected a finite number, found {} (out of float64 range)", line,
                                 column, literal));
  }
}

std::string json_child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string json_index(const std::string& path, std::size_t index) { return path + "[" + std::to_string(index) + "]"; }

std::string describe_json(const Json& value) {
  // strings cut past 40 bytes, objects with their number of keys
  static constexpr JsonFoundWording kWording{40, 37, "...", false, true, true, "an unsupported JSON value"};
  return describe_json_value(value, kWording);
}

void JsonReader::fail(const std::string& path, const std::string& message) const {
  throw InputError(file_, path, message);
}

void JsonReader::report(const std::string& path, const std::string& message) const {
  if (!collected_) fail(path, message);
  collected_->emplace_back(file_, path, message);
  if (collected_->size() >= kMaxReportedErrors) throw TooManyErrors{};
}

const Json& JsonReader::object(const Json& value, const std::string& path,
                               const std::vector<std::string>& known) const {
  if (collected_ && is_missing(value)) throw AlreadyReported{};
  if (!value.is_object()) fail(path, "expected an object, found " + describe_json(value));
  for (auto it = value.begin(); it != value.end(); ++it) {
    const std::string& key = it.key();
    if (key == "comment" || std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string suggestion = did_you_mean(key, known);
    std::string allowed;
    for (const auto& k : known) allowed += (allowed.empty() ? "" : ", ") + k;
    report(json_child(path, key), suggestion.empty()
                                      ? fmt::format("unknown key \"{}\" (expected one of: {})", key, allowed)
                                      : fmt::format("unknown key \"{}\"; did you mean \"{}\"?", key, suggestion));
  }
  return value;
}

const Json& JsonReader::array(const Json& value, const std::string& path) const {
  if (!value.is_array()) fail(path, "expected an array, found " + describe_json(value));
  return value;
}

const Json* JsonReader::member(const Json& object, const std::string& key) const {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// What a missing field reads as in collect mode: a null told apart from a null the file
// wrote ("W_q": null) by its address, so that an explicit null is still an error.
static const Json kMissing;

bool JsonReader::is_missing(const Json& value) const { return &value == &kMissing; }

const Json& JsonReader::required(const Json& object, const std::string& path, const std::string& key) const {
  const Json* v = member(object, key);
  if (!v) {
    report(json_child(path, key), "missing (this field is required)");
    return kMissing;
  }
  return *v;
}

std::size_t JsonReader::positive_integer(const Json& value, const std::string& path, std::size_t max) const {
  if (value.is_number_unsigned() || value.is_number_integer()) {
    const std::int64_t v =
        value.is_number_unsigned()
            ? static_cast<std::int64_t>(std::min<std::uint64_t>(value.get<std::uint64_t>(), INT64_MAX))
            : value.get<std::int64_t>();
    if (v <= 0) fail(path, fmt::format("expected a positive integer, found {}", v));
    if (static_cast<std::uint64_t>(v) > max) fail(path, fmt::format("expected at most {}, found {}", max, v));
    return static_cast<std::size_t>(v);
  }
  fail(path, "expected a positive integer, found " + describe_json(value));
}

std::int64_t JsonReader::integer(const Json& value, const std::string& path) const {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_unsigned() && value.get<std::uint64_t>() <= INT64_MAX) return value.get<std::int64_t>();
  fail(path, "expected an integer, found " + describe_json(value));
}

double JsonReader::finite_number(const Json& value, const std::string& path) const {
  if (!value.is_number()) fail(path, "expected a number, found " + describe_json(value));
  const double v = value.get<double>();
  if (!std::isfinite(v)) fail(path, "expected a finite number, found " + value.dump() + " (out of float64 range)");
  return v;
}

bool JsonReader::boolean(const Json& value, const std::string& path) const {
  if (!value.is_boolean()) fail(path, "expected true or false, found " + describe_json(value));
  return value.get<bool>();
}

std::string JsonReader::string(const Json& value, const std::string& path) const {
  if (!value.is_string()) fail(path, "expected a string, found " + describe_json(value));
  return value.get<std::string>();
}

std::string JsonReader::choice(const Json& value, const std::string& path,
                               const std::vector<std::string>& choices) const {
  const std::string s = string(value, path);
  if (std::find(choices.begin(), choices.end(), s) != choices.end()) return s;
  std::string allowed;
  for (const auto& c : choices) allowed += (allowed.empty() ? "\"" : ", \"") + c + "\"";
  const std::string suggestion = did_you_mean(s, choices);
  fail(path, fmt::format("expected one of {}, found \"{}\"{}", allowed, s,
                         suggestion.empty() ? "" : "; did you mean \"" + suggestion + "\"?"));
}

}  // namespace attn
