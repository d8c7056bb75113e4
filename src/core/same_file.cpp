#include "core/same_file.h"

#include <sys/stat.h>

#include <climits>
#include <cstdlib>
#include <optional>

namespace attn {

namespace {

// The path with its folder resolved (links, "..", "."): the name a file not yet written
// will have. Empty when the folder does not exist.
std::string resolved_path(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  char resolved[PATH_MAX];
  if (::realpath(folder.c_str(), resolved) == nullptr) return "";
  if (name.empty() || name == "." || name == "..") {
    if (::realpath(path.c_str(), resolved) == nullptr) return "";
    return resolved;
  }
  const std::string base = resolved;
  return (base == "/" ? "" : base) + "/" + name;
}

std::optional<struct stat> file_status(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-") return a == b;
  if (a == b) return true;
  const auto sa = file_status(a), sb = file_status(b);
  if (sa && sb) return sa->st_dev == sb->st_dev && sa->st_ino == sb->st_ino;
  if (sa || sb) return false;
  const std::string ra = resolved_path(a);
  return !ra.empty() && ra == resolved_path(b);
}

}  // namespace attn
