#include "checkpoint/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "attn/error.h"
#include "core/read_files.h"

namespace attn {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, "", std::string("cannot open the file: ") + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw InputError(path, "", "expected a regular file");
  }
  note_read_file(fd, path);
  size_ = static_cast<std::uint64_t>(info.st_size);
  if (size_ > 0) {
    // MAP_PRIVATE + PROT_READ: pages come from the page cache as the weights are read.
    void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapped == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      throw InputError(path, "", std::string("cannot map the file into memory: ") + std::strerror(error));
    }
    data_ = static_cast<const std::uint8_t*>(mapped);
  }
  ::close(fd);  // the mapping keeps the file open
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

}  // namespace attn
