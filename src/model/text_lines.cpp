#include "model/text_lines.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "attn/error.h"
#include "core/read_files.h"
#include "model/json_reader.h"

namespace attn {

namespace {

// Read this much at a time: a line longer than the caller allows is found after at most
// one chunk more than it.
constexpr std::size_t kChunkBytes = 1 << 16;

}  // namespace

TextLines::TextLines(const std::string& path, std::uint64_t max_bytes, const char* what)
    : name_(path == "-" ? kStandardInputName : path), what_(what), max_bytes_(max_bytes) {
  struct stat info {};
  if (path == "-") {
    if (::fstat(STDIN_FILENO, &info) != 0) throw InputError(name_, "", "cannot read: standard input is closed");
    fd_ = STDIN_FILENO;
  } else if (::stat(path.c_str(), &info) != 0) {
    throw InputError(name_, "", "cannot open: no such file");
  }
  if (S_ISDIR(info.st_mode)) throw InputError(name_, "", "expected a file, found a directory");
  // A regular file's size is known: refuse before reading a byte (of standard input, only
  // what is left of it counts).
  if (S_ISREG(info.st_mode)) {
    const off_t at = fd_ == STDIN_FILENO ? ::lseek(STDIN_FILENO, 0, SEEK_CUR) : 0;
    const auto left = static_cast<std::uint64_t>(info.st_size - (at > 0 && at <= info.st_size ? at : 0));
    if (left > max_bytes) too_large(name_, exact_bytes(left), max_bytes, what);
  }
  if (fd_ < 0) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw InputError(name_, "", "cannot open for reading");
    owns_fd_ = true;
  }
  note_read_file(fd_, name_);
}

TextLines::TextLines(std::string text, std::string name)
    : name_(std::move(name)), at_end_(true), buffer_(std::move(text)) {
  read_ = max_bytes_ = buffer_.size();
}

TextLines::~TextLines() {
  if (owns_fd_) ::close(fd_);
}

bool TextLines::refill() {
  if (at_end_) return false;
  buffer_.erase(0, at_);
  at_ = 0;
  const std::size_t kept = buffer_.size();
  buffer_.resize(kept + kChunkBytes);
  ssize_t got = 0;
  do {
    got = ::read(fd_, buffer_.data() + kept, kChunkBytes);
  } while (got < 0 && errno == EINTR);
  if (got < 0) throw InputError(name_, "", std::string("read error: ") + std::strerror(errno));
  buffer_.resize(kept + static_cast<std::size_t>(got));
  read_ += static_cast<std::uint64_t>(got);
  // A device or a pipe has no size to check in advance, and must not be read without end.
  if (read_ > max_bytes_) too_large(name_, "more than that", max_bytes_, what_);
  at_end_ = got == 0;
  return !at_end_;
}

bool TextLines::next(std::string& line, std::size_t max_line, const std::function<std::string()>& expected) {
  std::size_t checked = at_;  // the line's bytes from at_ to here hold no NUL and no '\n'
  for (;;) {
    const char* base = buffer_.data();
    const auto* newline = static_cast<const char*>(std::memchr(base + checked, '\n', buffer_.size() - checked));
    const std::size_t end = newline ? static_cast<std::size_t>(newline - base) : buffer_.size();
    if (const auto* nul = static_cast<const char*>(std::memchr(base + checked, '\0', end - checked)))
      throw InputError(fmt::format("{}:{}", name_, number_ + 1), "",
                       fmt::format("column {}: expected text, found a NUL byte; is this the right file?",
                                   static_cast<std::size_t>(nul - base) - at_ + 1));
    if (end - at_ > max_line)
      throw InputError(fmt::format("{}:{}", name_, number_ + 1), "",
                       fmt::format("expected {}, found a longer line; is this the right file?", expected()));
    checked = end;
    if (newline || at_end_) {
      if (!newline && at_ == buffer_.size()) return false;
      ++number_;
      line.assign(base + at_, end - at_);
      at_ = newline ? end + 1 : end;
      return true;
    }
    checked -= at_;  // refill() moves the unread bytes to the front
    refill();
  }
}

}  // namespace attn
