#include "core/read_files.h"

#include <sys/stat.h>

#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace attn {

namespace {

// Device and inode, and the time the inode last changed: a file deleted while the run goes
// on may give its inode number to a new file, which is not the one read.
struct FileId {
  dev_t device;
  ino_t inode;
  long long changed_s, changed_ns;
  bool operator<(const FileId& o) const {
    return std::tie(device, inode, changed_s, changed_ns) < std::tie(o.device, o.inode, o.changed_s, o.changed_ns);
  }
};

FileId id_of(const struct stat& info) {
  return {info.st_dev, info.st_ino, static_cast<long long>(info.st_ctim.tv_sec),
          static_cast<long long>(info.st_ctim.tv_nsec)};
}

struct ReadFiles {
  std::mutex mutex;
  std::map<FileId, std::string> names;  // the first name each file was read by
};

ReadFiles& read_files() {
  static ReadFiles files;
  return files;
}

void note(const struct stat& info, const std::string& name) {
  if (!S_ISREG(info.st_mode)) return;
  ReadFiles& files = read_files();
  const std::lock_guard<std::mutex> lock(files.mutex);
  files.names.emplace(id_of(info), name);
}

}  // namespace

void note_read_file(int fd, const std::string& name) {
  struct stat info {};
  if (::fstat(fd, &info) == 0) note(info, name);
}

void note_read_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) note(info, path);
}

std::optional<std::string> read_file_named(const std::string& path) {
  struct stat info {};
  if (path == "-" || ::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  ReadFiles& files = read_files();
  const std::lock_guard<std::mutex> lock(files.mutex);
  const auto it = files.names.find(id_of(info));
  if (it == files.names.end()) return std::nullopt;
  return it->second;
}

void forget_read_files() {
  ReadFiles& files = read_files();
  const std::lock_guard<std::mutex> lock(files.mutex);
  files.names.clear();
}

}  // namespace attn
