#include "attn/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

namespace {
// Big enough that a write(2) call costs little next to the copy it makes.
constexpr std::size_t kBufferSize = std::size_t{4} << 20;
}  // namespace

OutputFile::OutputFile(const std::string& path, std::string what) : path_(path), what_(std::move(what)) {
  buffer_.reserve(kBufferSize);
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    return;
  }
  // The temporary file sits beside the target, so the final rename stays on one file system.
  std::string temp = path + ".tmp-XXXXXX";
  fd_ = ::mkstemp(temp.data());
  if (fd_ < 0) fail(std::strerror(errno));
  temp_path_ = temp;
  // mkstemp makes the file private (0600); a dump is an ordinary output file.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd_, 0666 & ~mask);
}

OutputFile::~OutputFile() {
  if (committed_) return;
  if (!temp_path_.empty()) {
    if (fd_ >= 0) ::close(fd_);
    ::unlink(temp_path_.c_str());
  }
}

void OutputFile::fail(const std::string& what) const {
  throw InputError(path_, "", fmt::format("cannot write {}: {}", what_, what));
}

void OutputFile::write(const char* data, std::size_t size) {
  if (size >= kBufferSize / 2) {
    // Large blocks (a tensor's raw data in a .npz) go straight to the file, without a
    // copy, after what is already buffered.
    flush();
    write_all(data, size);
    return;
  }
  if (buffer_.size() + size > kBufferSize) flush();
  buffer_.insert(buffer_.end(), data, data + size);
}

void OutputFile::write_all(const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(std::strerror(errno));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
    written_ += static_cast<std::size_t>(n);
  }
}

void OutputFile::flush() {
  write_all(buffer_.data(), buffer_.size());
  buffer_.clear();
}

void OutputFile::commit() {
  flush();
  if (temp_path_.empty()) {
    committed_ = true;
    return;
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(std::strerror(errno));  // the destructor removes the temporary file
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) fail(std::strerror(errno));
  committed_ = true;
}

}  // namespace attn
