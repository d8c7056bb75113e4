#include "io/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

namespace {
// Big enough that a write(2) call costs little next to the copy it makes.
constexpr std::size_t kBufferSize = std::size_t{4} << 20;

// The temporary file a signal handler must remove. A fixed buffer: a handler may only call
// async-signal-safe functions (unlink, sigaction, raise), not touch a std::string.
char g_temp_path[4096];
volatile std::sig_atomic_t g_temp_active = 0;
const int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
struct sigaction g_previous[4];
// SIGXFSZ (a file size limit, `ulimit -f`) would kill the process mid-write and leave the
// temporary file; ignored, it makes the write fail with EFBIG, which is reported.
struct sigaction g_previous_xfsz;

extern "C" void remove_temp_and_reraise(int sig) {
  if (g_temp_active) ::unlink(g_temp_path);
  g_temp_active = 0;
  // Die of the same signal, as the shell expects (exit status 128 + sig).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigaction(sig, &default_action, nullptr);
  ::raise(sig);
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& what, const std::string& why) {
  throw InputError(path, "", fmt::format("cannot write {}: {}", what, why));
}

}  // namespace

TempFile::TempFile(const std::string& target, std::string what) : target_(target), what_(std::move(what)) {
  std::string name = target + ".tmp-XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0) cannot_write(target_, what_, std::strerror(errno));
  path_ = name;
  // mkstemp makes the file private (0600); a dump is an ordinary output file.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  // Remove the file if a signal stops the process, unless another TempFile already does
  // that or the name does not fit the handler's buffer.
  if (!g_temp_active && path_.size() < sizeof g_temp_path) {
    std::memcpy(g_temp_path, path_.c_str(), path_.size() + 1);
    g_temp_active = 1;
    owns_signals_ = true;
    struct sigaction action {};
    action.sa_handler = remove_temp_and_reraise;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < 4; ++i) {
      ::sigaction(kCleanupSignals[i], nullptr, &g_previous[i]);
      // A signal the user chose to ignore (nohup) stays ignored.
      if (g_previous[i].sa_handler != SIG_IGN) ::sigaction(kCleanupSignals[i], &action, nullptr);
    }
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGXFSZ, &ignore, &g_previous_xfsz);
  }
}

TempFile::~TempFile() {
  if (!committed_) std::remove(path_.c_str());
  if (owns_signals_) {
    g_temp_active = 0;
    for (std::size_t i = 0; i < 4; ++i)
      if (g_previous[i].sa_handler != SIG_IGN) ::sigaction(kCleanupSignals[i], &g_previous[i], nullptr);
    ::sigaction(SIGXFSZ, &g_previous_xfsz, nullptr);
  }
}

void TempFile::commit() {
  if (std::rename(path_.c_str(), target_.c_str()) != 0) cannot_write(target_, what_, std::strerror(errno));
  committed_ = true;
}

OutputFile::OutputFile(const std::string& path, std::string what) : path_(path), what_(std::move(what)) {
  buffer_.reserve(kBufferSize);
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    return;
  }
  struct stat info {};
  const bool exists = ::stat(path.c_str(), &info) == 0;
  if (exists && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {
    // A device or a pipe (/dev/stdout, /dev/null, a FIFO): nothing to replace whole, and a
    // rename would replace the device node itself (as root, /dev/stdout for everyone).
    // Write straight into it.
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) fail(std::strerror(errno));
    owns_fd_ = true;
    return;
  }
  // Through a symbolic link, replace the file it points to and keep the link.
  std::string target = path;
  struct stat link {};
  if (exists && ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    if (char* resolved = ::realpath(path.c_str(), nullptr)) {
      target = resolved;
      std::free(resolved);
    }
  }
  temp_ = std::make_unique<TempFile>(target, what_);
  fd_ = ::open(temp_->path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd_ < 0) fail(std::strerror(errno));
  owns_fd_ = true;
}

OutputFile::~OutputFile() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  // temp_, unless committed, removes the temporary file
}

void OutputFile::fail(const std::string& why) const { cannot_write(path_, what_, why); }

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
      fail(fmt::format("write failed: {}", std::strerror(errno)));
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
  if (owns_fd_) {
    const int fd = fd_;
    fd_ = -1;
    // close() reports what the disk could not take at the latest (NFS, quotas).
    if (::close(fd) != 0) fail(fmt::format("write failed: {}", std::strerror(errno)));
  }
  if (temp_) temp_->commit();
  committed_ = true;
}

}  // namespace attn
