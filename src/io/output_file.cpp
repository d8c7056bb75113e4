#include "io/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include <fmt/format.h>

#include "attn/error.h"
#include "core/read_files.h"
#include "core/same_file.h"

namespace attn {

namespace {
// Blocks at least this large (a tensor's raw data in a .npz, a part of a JSON tensor's
// text) are written as they are: copying them into the buffer first would cost more than
// the write(2) call it saves.
constexpr std::size_t kDirectWriteSize = std::size_t{64} << 10;

// The temporary files a signal handler must remove (a dump and an HTML page may be written
// at once). Fixed buffers: a handler may only call async-signal-safe functions (unlink,
// sigaction, raise), not touch a std::string.
constexpr int kSlots = 4;
char g_temp_paths[kSlots][4096];
volatile std::sig_atomic_t g_temp_active[kSlots] = {};
// TempFiles alive: the handlers are installed when the first is made, restored after the last.
int g_handler_users = 0;
// Every signal whose default action ends the process: the temporary file must go with it.
// SIGPIPE (`attn explain --dump big.json | head -1`), SIGABRT (a failed assertion in a
// library), the timers and resource limits (SIGALRM, SIGXCPU, SIGVTALRM, SIGPROF), and
// the user's own (SIGUSR1, SIGUSR2).
const int kCleanupSignals[] = {SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE,   SIGABRT,
                               SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGVTALRM, SIGPROF};
constexpr std::size_t kSignalCount = sizeof kCleanupSignals / sizeof kCleanupSignals[0];
struct sigaction g_previous[kSignalCount];
// SIGXFSZ (a file size limit, `ulimit -f`) would kill the process mid-write and leave the
// temporary file; ignored, it makes the write fail with EFBIG, which is reported.
struct sigaction g_previous_xfsz;

void remove_temp_files() {
  for (int i = 0; i < kSlots; ++i) {
    if (g_temp_active[i]) ::unlink(g_temp_paths[i]);
    g_temp_active[i] = 0;
  }
}

extern "C" void remove_temp_and_reraise(int sig) {
  remove_temp_files();
  // Die of the same signal, as the shell expects (exit status 128 + sig).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigaction(sig, &default_action, nullptr);
  ::raise(sig);
}

// Also at exit(): a library that gives up by calling exit() (libgomp, when it cannot start
// a thread) unwinds no stack, so no destructor would remove the file.
extern "C" void remove_temp_at_exit() { remove_temp_files(); }

void install_handlers() {
  struct sigaction action {};
  action.sa_handler = remove_temp_and_reraise;
  sigemptyset(&action.sa_mask);
  for (std::size_t i = 0; i < kSignalCount; ++i) {
    ::sigaction(kCleanupSignals[i], nullptr, &g_previous[i]);
    // A signal the user chose to ignore (nohup) stays ignored.
    if (g_previous[i].sa_handler != SIG_IGN) ::sigaction(kCleanupSignals[i], &action, nullptr);
  }
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGXFSZ, &ignore, &g_previous_xfsz);
}

void restore_handlers() {
  for (std::size_t i = 0; i < kSignalCount; ++i)
    if (g_previous[i].sa_handler != SIG_IGN) ::sigaction(kCleanupSignals[i], &g_previous[i], nullptr);
  ::sigaction(SIGXFSZ, &g_previous_xfsz, nullptr);
}

// `pattern` with its trailing XXXXXX replaced by random letters and digits, as mkstemp does.
std::string with_random_suffix(std::string pattern) {
  static const char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static std::mt19937_64 engine(
      std::random_device{}() ^ (static_cast<std::uint64_t>(::getpid()) << 32) ^
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  for (std::size_t i = pattern.size() - 6; i < pattern.size(); ++i) pattern[i] = kLetters[engine() % 62];
  return pattern;
}

// The machine's refusals (a full disk, a quota, an I/O error, no descriptors left) are
// environment failures; the rest (a missing folder, no permission) are the path's.
bool is_environment_failure(int error) {
  return error == ENOSPC || error == EDQUOT || error == EIO || error == EFBIG || error == EMFILE || error == ENFILE ||
         error == ENOMEM;
}

[[noreturn]] void cannot_write(const std::string& path, const std::string& what, const std::string& why,
                               int error = 0) {
  if (path == "-") throw EnvironmentError(fmt::format("attn: cannot write {} to standard output: {}", what, why));
  const std::string message = fmt::format("cannot write {}: {}", what, why);
  if (is_environment_failure(error)) throw EnvironmentError(fmt::format("{}: {}", path, message));
  throw InputError(path, "", message);
}

// "dir/.name.tmp-XXXXXX" beside `target`, the name cut so that it stays within the 255
// bytes a file name may have (a 255-byte target name must still be writable).
std::string temporary_name(const std::string& target) {
  const std::size_t slash = target.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : target.substr(0, slash + 1);
  std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
  constexpr std::size_t kMaxName = 255, kAdded = std::char_traits<char>::length("..tmp-XXXXXX");
  if (name.size() > kMaxName - kAdded) name.resize(kMaxName - kAdded);
  return folder + "." + name + ".tmp-XXXXXX";
}

// Refuses to replace a file the run reads (core/read_files.h), whatever name leads to it,
// but the one input the output is the new version of.
void refuse_read_file(const std::string& path, const std::string& what, const std::string& update_of) {
  if (!update_of.empty() && same_file(path, update_of)) return;
  if (const auto read = read_file_named(path))
    cannot_write(path, what, fmt::format("it is a file this run reads ({}); choose another name for {}", *read, what));
}

}  // namespace

TempFile::TempFile(const std::string& target, std::string what, std::string update_of)
    : target_(target), what_(std::move(what)), update_of_(std::move(update_of)) {
  static const bool at_exit_registered = std::atexit(remove_temp_at_exit) == 0;
  (void)at_exit_registered;
  // The handler knows the file's name before the file exists: a signal between creating
  // the file and registering it would leave it behind (seen under load, as mkstemp then
  // registering). So the name is drawn here, registered, and only then created, with
  // O_EXCL as mkstemp does; a name taken already is drawn again.
  if (g_handler_users++ == 0) install_handlers();
  for (int i = 0; i < kSlots && slot_ < 0; ++i)
    if (!g_temp_active[i]) slot_ = i;
  const std::string pattern = temporary_name(target);
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    path_ = with_random_suffix(pattern);
    const bool tracked = slot_ >= 0 && path_.size() < sizeof g_temp_paths[0];
    if (tracked) {
      std::memcpy(g_temp_paths[slot_], path_.c_str(), path_.size() + 1);
      g_temp_active[slot_] = 1;
    }
    fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) break;
    const int error = errno;
    if (tracked) g_temp_active[slot_] = 0;  // the name is someone else's, or nothing was made
    if (error != EEXIST || attempt == 100) {
      if (--g_handler_users == 0) restore_handlers();
      cannot_write(target_, what_, std::strerror(error), error);
    }
  }
  if (slot_ >= 0 && !g_temp_active[slot_]) slot_ = -1;  // a name too long for the handler's buffer
  // Created private (0600). A file that is replaced keeps its own mode (a private 0600 dump
  // stays private); a new one is an ordinary output file.
  struct stat existing {};
  if (::stat(target.c_str(), &existing) == 0 && S_ISREG(existing.st_mode)) {
    ::fchmod(fd, existing.st_mode & 07777);
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
  }
  ::close(fd);
}

TempFile::~TempFile() {
  if (!committed_) std::remove(path_.c_str());
  if (slot_ >= 0) g_temp_active[slot_] = 0;
  if (--g_handler_users == 0) restore_handlers();
}

void TempFile::commit() {
  // Again at the last moment: a file may have been read after this one was opened.
  refuse_read_file(target_, what_, update_of_);
  if (std::rename(path_.c_str(), target_.c_str()) != 0) cannot_write(target_, what_, std::strerror(errno), errno);
  committed_ = true;
  if (slot_ >= 0) g_temp_active[slot_] = 0;  // its name is the target's now
}

OutputFile::OutputFile(const std::string& path, std::string what, std::string update_of)
    : path_(path), what_(std::move(what)), update_of_(std::move(update_of)) {
  buffer_.reserve(kBufferBytes);
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    return;
  }
  struct stat info {};
  const bool exists = ::stat(path.c_str(), &info) == 0;
  struct stat link {};
  const bool is_link = ::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode);
  // A link that leads nowhere (a loop, a missing target) must not be replaced by a file.
  if (is_link && !exists) fail(fmt::format("it is a symbolic link that leads nowhere ({})", std::strerror(errno)));
  if (exists && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {
    // A device or a pipe (/dev/stdout, /dev/null, a FIFO): nothing to replace whole, and a
    // rename would replace the device node itself (as root, /dev/stdout for everyone).
    // Write straight into it.
    fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) fail(std::strerror(errno));
    owns_fd_ = true;
    return;
  }
  refuse_read_file(path, what_, update_of_);
  // Through a symbolic link, replace the file it points to and keep the link.
  std::string target = path;
  if (is_link) {
    if (char* resolved = ::realpath(path.c_str(), nullptr)) {
      target = resolved;
      std::free(resolved);
    }
  }
  temp_ = std::make_unique<TempFile>(target, what_, update_of_);
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
  if (size >= kDirectWriteSize) {
    // Straight to the file, without a copy, after what is already buffered.
    flush();
    write_all(data, size);
    return;
  }
  if (buffer_.size() + size > kBufferBytes) flush();
  buffer_.insert(buffer_.end(), data, data + size);
}

void OutputFile::write_all(const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      cannot_write(path_, what_, fmt::format("write failed: {}", std::strerror(errno)), errno);
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
    if (::close(fd) != 0) cannot_write(path_, what_, fmt::format("write failed: {}", std::strerror(errno)), errno);
  }
  if (temp_) temp_->commit();
  committed_ = true;
}

}  // namespace attn
