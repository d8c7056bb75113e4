#include "standard_streams.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "attn/error.h"

namespace attn::cli {

namespace {
// The first failure seen on standard output, kept because later flushes may clear errno.
int output_errno = 0;
}  // namespace

void guard_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // open() returns the lowest free number: this one.
    const int reserved = ::open("/dev/null", O_RDONLY);
    if (reserved != fd && reserved >= 0) ::close(reserved);
  }
}

void check_standard_output() {
  errno = 0;
  std::cout.flush();
  if (std::cout.fail() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    // The write that failed may have been an earlier one, its errno gone: ask again.
    if (!output_errno && !errno && ::write(STDOUT_FILENO, "\n", 1) != 1) output_errno = errno;
    if (!output_errno) output_errno = errno ? errno : EIO;
    throw EnvironmentError(std::string("attn: cannot write to standard output: ") + std::strerror(output_errno));
  }
}

}  // namespace attn::cli
