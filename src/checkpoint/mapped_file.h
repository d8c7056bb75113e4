// A file mapped read-only into memory: the weights are read where they lie on disk, never
// copied whole into the heap.
#ifndef ATTN_CHECKPOINT_MAPPED_FILE_H_
#define ATTN_CHECKPOINT_MAPPED_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn {

class MappedFile {
 public:
  // InputError naming `path` when it does not exist, is a folder or cannot be mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;

  const std::uint8_t* data() const { return data_; }
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::uint64_t size_ = 0;
};

}  // namespace attn

#endif  // ATTN_CHECKPOINT_MAPPED_FILE_H_
