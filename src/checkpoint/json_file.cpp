#include "checkpoint/json_file.h"

#include <sys/stat.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "attn/error.h"
#include "core/json_duplicate_keys.h"
#include "core/json_found.h"
#include "core/memory_budget.h"
#include "core/read_files.h"

namespace attn {

bool nested_deeper_than(const std::string& text, std::size_t limit) {
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
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

Json read_json_object_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw InputError(path, "", std::string("cannot read: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) throw InputError(path, "", "expected a file, found a folder or a device");
  if (static_cast<std::uint64_t>(info.st_size) > kMaxCheckpointJsonBytes)
    throw InputError(path, "",
                     fmt::format("the file has {} bytes, more than the {} MiB attn reads", info.st_size,
                                 kMaxCheckpointJsonBytes >> 20));
  check_json_text_fits(path, "", static_cast<std::uint64_t>(info.st_size));
  std::ifstream in(path, std::ios::binary);
  note_read_file(path);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw InputError(path, "", "cannot read the file");
  const std::string s = text.str();
  count_json_parse(path, "", s.data(), s.size());
  if (nested_deeper_than(s, 32)) throw InputError(path, "", "expected JSON nested at most 32 levels deep");
  Json value;
  try {
    refuse_duplicate_keys(s, path);  // the document parser would keep the last value silently
    value = Json::parse(s);
  } catch (const Json::exception& e) {
    throw InputError(path, "", fmt::format("malformed JSON: {}", e.what()));
  }
  if (!value.is_object())
    throw InputError(path, "", fmt::format("expected a JSON object, found {}", describe_config_value(value)));
  return value;
}

std::string describe_config_value(const Json& v) {
  // strings as JSON text, cut past 60 bytes
  static constexpr JsonFoundWording kWording{60, 60, "…", true, false, true, "null"};
  return describe_json_value(v, kWording);
}

}  // namespace attn
