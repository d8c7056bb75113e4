// Where a dump (or another file a command writes) may go, and in which format: checked
// before the run, so that a bad name costs nothing.
#include <sys/stat.h>

#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "attn/dump.h"
#include "attn/error.h"
#include "attn/parameters.h"

namespace attn {

namespace {

std::string parent_folder(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& what, const std::string& why) {
  throw InputError(path, "", "cannot write " + what + ": " + why);
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& why) { cannot_write(path, "the dump", why); }

[[noreturn]] void is_a_directory(const std::string& path, const std::string& what, const std::string& example_name) {
  cannot_write(
      path, what,
      "it is a directory; give a file name, such as " + (path.back() == '/' ? path : path + "/") + example_name);
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// ".npy" for "run/trace.npy"; "" when the file name has no dot after its first character.
std::string extension(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::size_t dot = name.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? std::string() : name.substr(dot);
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::optional<JsonNonFinite> parse_json_non_finite(const std::string& text) {
  if (text == "string") return JsonNonFinite::String;
  if (text == "null") return JsonNonFinite::Null;
  if (text == "literal") return JsonNonFinite::Literal;
  return std::nullopt;
}

std::optional<DumpParameters> parse_dump_parameters(const std::string& text) {
  if (text == "auto") return DumpParameters::Auto;
  if (text == "yes") return DumpParameters::Yes;
  if (text == "no") return DumpParameters::No;
  return std::nullopt;
}

bool dump_includes_parameters(DumpParameters choice, const Model& model) {
  if (choice != DumpParameters::Auto) return choice == DumpParameters::Yes;
  std::size_t bytes = 0;
  for (const auto& p : parameters(model)) bytes += p.tensor->size() * sizeof(double);  // stored ones too
  return bytes <= kAutoDumpParametersBytes;
}

DumpFormat dump_format(const std::string& path) {
  if (path == "-" || ends_with(path, ".json")) return DumpFormat::Json;
  if (ends_with(path, ".npz")) return DumpFormat::Npz;
  // An existing device or pipe (/dev/stdout, a FIFO, >(gzip > t.json.gz)): written into, as JSON.
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) is_a_directory(path, "the dump", "trace.json");
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) return DumpFormat::Json;
  const std::string ext = extension(path);
  std::string found = ext.empty() ? "a name without an extension" : "\"" + ext + "\"";
  if (lower(ext) == ".json" || lower(ext) == ".npz") found += " (did you mean \"" + lower(ext) + "\"?)";
  cannot_write(
      path, "expected a name ending in .json (JSON) or .npz (NumPy), or - for JSON on standard output, found " + found);
}

void check_output_target(const std::string& path, const std::vector<std::string>& input_paths, const std::string& what,
                         const std::string& example_name) {
  if (path == "-") return;
  struct stat target {};
  if (::stat(path.c_str(), &target) == 0) {
    if (S_ISDIR(target.st_mode)) is_a_directory(path, what, example_name);
    for (const auto& input : input_paths) {
      struct stat in {};
      if (!input.empty() && ::stat(input.c_str(), &in) == 0 && in.st_dev == target.st_dev && in.st_ino == target.st_ino)
        cannot_write(path, what, "it is the input model file " + input + "; choose another name for " + what);
    }
  } else {
    const std::string folder = parent_folder(path);
    struct stat parent {};
    if (::stat(folder.c_str(), &parent) != 0) cannot_write(path, what, "the folder " + folder + " does not exist");
    if (!S_ISDIR(parent.st_mode)) cannot_write(path, what, folder + " is not a folder");
  }
}

void check_dump_target(const std::string& dump_path, const std::vector<std::string>& input_paths) {
  if (dump_path == "-") return;
  check_output_target(dump_path, input_paths, "the dump", "trace.json");
  dump_format(dump_path);
}

}  // namespace attn
