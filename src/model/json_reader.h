// Reading a JSON document with errors that say where: the file, the JSON path
// (encoder[0].attention.W_q), what was expected and what was found.
#ifndef ATTN_MODEL_JSON_READER_H_
#define ATTN_MODEL_JSON_READER_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "core/did_you_mean.h"

namespace attn {

using Json = nlohmann::json;

// Input files larger than this are refused before they are read (a model file is a few
// KiB; a 256 MiB one is a mistake, or an attempt to exhaust memory).
constexpr std::uint64_t kMaxInputBytes = 256ULL << 20;
// JSON nested deeper than this is refused before it is parsed. Model files need about 10
// levels; the limit keeps a file of a million '[' from exhausting the stack or memory.
constexpr std::size_t kMaxJsonDepth = 64;

// How errors name standard input, which the path "-" reads.
inline const char* kStandardInputName = "<stdin>";

// The whole file as text; "-" reads standard input to its end. InputError (naming the path,
// or "<stdin>") if it does not exist, is a directory, cannot be read or holds more
// than `max_bytes` (checked before reading, and again while reading for files whose size
// is not known in advance, such as a pipe). `what` names the kind of file in that message
// ("expected a model file of at most 256 MiB"). The file is JSON text: a NUL byte is refused
// as it is read ("line L, column C: expected JSON text, found a NUL byte", as parse_json
// says), so /dev/zero or a binary file is refused at its first chunk.
std::string read_text_file(const std::string& path, std::uint64_t max_bytes = kMaxInputBytes,
                           const char* what = "a model file");

// "3.5 MiB (3670016 bytes)": exact, since 256.0 MiB may be one byte over 256 MiB.
std::string exact_bytes(std::uint64_t bytes);
// "PATH: expected WHAT of at most 256 MiB, found FOUND; is this the right file?"
[[noreturn]] void too_large(const std::string& path, const std::string& found, std::uint64_t max_bytes,
                            const char* what);

// Parses JSON; a syntax error becomes "FILE: malformed JSON at line L, column C: ..."
// (InputError); nesting deeper than `max_depth` arrays and objects becomes
// "FILE: line L, column C: expected JSON nested at most 64 levels deep, ...".
Json parse_json(const std::string& text, const std::string& file, std::size_t max_depth = kMaxJsonDepth,
                std::uint64_t memory_limit = 0);

// "encoder[0].attention" + "W_q" -> "encoder[0].attention.W_q"; "" + "model" -> "model".
std::string json_child(const std::string& path, const std::string& key);
// "encoder" + 0 -> "encoder[0]".
std::string json_index(const std::string& path, std::size_t index);

// "an object", "a string", "a number (4.5)", "an array of 3", ...: what the user wrote.
std::string describe_json(const Json& value);

// Thrown in collect mode when a part of the file cannot be read because a field it needs
// was missing and has been reported already: the part is skipped without a second error.
struct AlreadyReported {};

// Collect mode stops after this many problems (a file of two million unknown keys would
// otherwise take minutes and gigabytes to list them all): thrown when the list is full.
constexpr std::size_t kMaxReportedErrors = 100;
struct TooManyErrors {};

// Reads values out of one document, naming the file in every error.
class JsonReader {
 public:
  explicit JsonReader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  [[noreturn]] void fail(const std::string& path, const std::string& message) const;

  // Collect mode (attn validate): unknown keys and missing fields are recorded in
  // `errors` and reading goes on (a missing field reads as null), so that one pass finds
  // every problem. Other errors still throw; the loader catches them per field.
  void collect_into(std::vector<InputError>* errors) { collected_ = errors; }
  bool collecting() const { return collected_ != nullptr; }
  // True for the value required() returns for a missing field in collect mode (already
  // reported), false for everything the file holds, a null it wrote included.
  bool is_missing(const Json& value) const;

  // The object at `path` (an InputError otherwise), with every key checked against `known`
  // (an unknown key is an error that suggests the nearest known key). "comment" is
  // allowed everywhere so that files can carry notes.
  const Json& object(const Json& value, const std::string& path, const std::vector<std::string>& known) const;
  const Json& array(const Json& value, const std::string& path) const;

  // Optional members: nullptr when absent.
  const Json* member(const Json& object, const std::string& key) const;
  // Required members: an error naming the missing key.
  const Json& required(const Json& object, const std::string& path, const std::string& key) const;

  std::size_t positive_integer(const Json& value, const std::string& path, std::size_t max = SIZE_MAX) const;
  std::int64_t integer(const Json& value, const std::string& path) const;
  double finite_number(const Json& value, const std::string& path) const;
  bool boolean(const Json& value, const std::string& path) const;
  std::string string(const Json& value, const std::string& path) const;
  // A string that must be one of `choices`.
  std::string choice(const Json& value, const std::string& path, const std::vector<std::string>& choices) const;

 private:
  void report(const std::string& path, const std::string& message) const;

  std::string file_;
  std::vector<InputError>* collected_ = nullptr;
};

}  // namespace attn

#endif  // ATTN_MODEL_JSON_READER_H_
