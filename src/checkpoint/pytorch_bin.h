// pytorch_model.bin: a state dict as torch.save writes it, read without running its pickle.
//
// Two formats (torch/serialization.py):
// - zip (torch.save since PyTorch 1.6): "ARCHIVE/data.pkl", the state dict's pickle, whose
//   persistent ids ('storage', torch.FloatStorage, KEY, LOCATION, NUMEL) name the entries
//   "ARCHIVE/data/KEY" holding each storage's raw little-endian bytes; "ARCHIVE/byteorder"
//   ("little", when present) and "ARCHIVE/version".
// - legacy (_use_new_zipfile_serialization=False, and every file before 1.6): five pickles
//   in a row (the magic number 0x1950a86a20f9469cfc6c, the protocol version 1001, the
//   machine's sys_info, the state dict with persistent ids ('storage', TYPE, KEY, LOCATION,
//   NUMEL, None), the list of storage keys), then each listed storage as an 8-byte
//   little-endian element count followed by its bytes.
// The pickles are read by attn's own machine (pickle_reader.h), which calls nothing. Each
// tensor _rebuild_tensor_v2 describes becomes a StoredTensor over the bytes of its storage
// where the file holds them, checked first: its storage present and as large as its
// persistent id says, its shape and offset inside the storage, its strides those of a
// C-ordered tensor. Tensors sharing a storage (tied weights) are views of the same bytes.
#ifndef ATTN_CHECKPOINT_PYTORCH_BIN_H_
#define ATTN_CHECKPOINT_PYTORCH_BIN_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "checkpoint/mapped_file.h"
#include "checkpoint/stored_tensor.h"

namespace attn {

// The largest state-dict pickle attn reads: about 200 bytes a tensor, so 64 MiB serve some
// 300,000 tensors in one file.
constexpr std::uint64_t kMaxStateDictPickleBytes = 64ULL << 20;

// The tensors of the pytorch_model.bin whose whole content is bytes[0, size), in the state
// dict's order, each span in the whole file. Every problem an InputError naming `file` and
// the entry, pickle or tensor. *reading_bytes (when given): the heap the reading held at its
// most besides the tensors returned (the pickles' values, the archive's directory).
std::vector<StoredTensor> parse_pytorch_bin(const std::uint8_t* bytes, std::uint64_t size, const std::string& file,
                                            std::uint64_t* reading_bytes = nullptr);

class PytorchBinFile : public WeightsFile {
 public:
  // Maps `path` and reads its pickles (parse_pytorch_bin); no weight is read.
  explicit PytorchBinFile(const std::string& path);

  const std::string& path() const override { return file_.path(); }
  const std::vector<StoredTensor>& tensors() const override { return tensors_; }
  const StoredTensor* find(const std::string& name) const override;
  TensorView view(const StoredTensor& tensor) const override;
  std::uint64_t reading_bytes() const override { return reading_bytes_; }

 private:
  MappedFile file_;
  std::vector<StoredTensor> tensors_;
  std::uint64_t reading_bytes_ = 0;
  std::unordered_map<std::string, std::size_t> index_;
};

}  // namespace attn

#endif  // ATTN_CHECKPOINT_PYTORCH_BIN_H_
