#include "checkpoint/locate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "attn/error.h"
#include "core/read_files.h"

namespace attn {

namespace {

enum class Kind { Missing, File, Folder };

Kind kind_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return Kind::Missing;
  return S_ISDIR(info.st_mode) ? Kind::Folder : Kind::File;
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// A Hub name is ORG/NAME or NAME: letters, digits, '-', '_', '.', at most one '/', and
// neither part "." nor "..". Anything else on the command line is a path.
bool looks_like_hub_name(const std::string& s) {
  if (s.empty() || s.size() > 200 || s.front() == '/' || s.back() == '/') return false;
  std::size_t slashes = 0;
  for (const char c : s) {
    if (c == '/')
      ++slashes;
    else if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return false;
  }
  if (slashes > 1) return false;
  const std::size_t slash = s.find('/');
  const std::string first = s.substr(0, slash), last = slash == std::string::npos ? "" : s.substr(slash + 1);
  for (const auto& part : {first, last})
    if (part == "." || part == ".." || part.rfind("..", 0) == 0) return false;
  return s.rfind("./", 0) != 0;
}

std::string cache_entry_name(const std::string& name) {
  std::string out = "models--";
  for (const char c : name) out += c == '/' ? std::string("--") : std::string(1, c);
  return out;
}

// What a path that should be a regular file is instead, for the one line that refuses it.
std::string kind_found(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "something other than a file";
}

// The commit refs/main points at: one line of hex digits (40 of them), read no further
// than 256 bytes: a ref that is a huge file names no commit. A regular file only, as the
// checkpoint's own files: a FIFO would block the run, a device (/dev/zero) names nothing.
// Opened without blocking, then checked on the descriptor, so nothing swapped in between
// the look and the open can block either. "" when there is no ref.
std::string read_ref(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return "";
    throw InputError(path, "",
                     std::string("expected a readable file naming a commit, found one that cannot be opened: ") +
                         std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw InputError(path, "", "expected a regular file naming a commit, found " + kind_found(info.st_mode));
  }
  note_read_file(fd, path);
  char head[256];
  ssize_t got = 0;
  do {
    got = ::read(fd, head, sizeof head);
  } while (got < 0 && errno == EINTR);
  ::close(fd);
  std::string commit(head, got > 0 ? static_cast<std::size_t>(got) : 0);
  commit = commit.substr(0, commit.find('\n'));
  while (!commit.empty() && (commit.back() == '\r' || commit.back() == ' ')) commit.pop_back();
  for (const char c : commit)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
  return commit;
}

}  // namespace

HubEnvironment HubEnvironment::from_process() {
  return HubEnvironment{env_or_empty("HF_HUB_CACHE"), env_or_empty("HF_HOME"), env_or_empty("HOME")};
}

std::string hub_cache_folder(const HubEnvironment& env) {
  if (!env.hf_hub_cache.empty()) return env.hf_hub_cache;
  if (!env.hf_home.empty()) return env.hf_home + "/hub";
  return env.home + "/.cache/huggingface/hub";
}

std::string locate_model(const std::string& source, const HubEnvironment& env) {
  const Kind kind = kind_of(source);
  if (kind == Kind::Folder) return source;
  if (kind == Kind::File)
    throw InputError(source, "",
                     "expected a model folder (config.json and model.safetensors) or a Hub name, found a file");
  if (!looks_like_hub_name(source))
    throw InputError(source, "", "no such file or folder (expected a model folder or a Hub name such as gpt2)");
  const std::string cache = hub_cache_folder(env);
  const std::string entry = cache + "/" + cache_entry_name(source);
  const std::string ref = entry + "/refs/main";
  const std::string commit = read_ref(ref);
  const std::string snapshot = entry + "/snapshots/" + commit;
  if (commit.empty() || kind_of(snapshot) != Kind::Folder)
    throw InputError(source, "",
                     fmt::format("not a folder, and not in the Hugging Face cache (looked for {}{}); attn never "
                                 "downloads: run `huggingface-cli download {}` on a machine with internet, or give a "
                                 "folder",
                                 commit.empty() ? ref : snapshot,
                                 env.hf_hub_cache.empty() ? (env.hf_home.empty() ? ", from HOME" : ", from HF_HOME")
                                                          : ", from HF_HUB_CACHE",
                                 source));
  return snapshot;
}

}  // namespace attn
