// A safetensors file (huggingface/safetensors): 8 bytes N (little-endian u64), N bytes of
// JSON header {"NAME": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
// "__metadata__": {...}}, then the data buffer the offsets point into.
//
// The file is memory-mapped; opening it reads the header alone and checks it whole (the
// header's length, its JSON, every dtype, shape and byte span, and that the spans tile the
// buffer exactly: no overlap, no gap, nothing past the end), so a broken or hostile file is
// refused in one line before any weight is touched. A tensor is read through a typed view
// on its bytes where they lie: F64, F32, F16 and BF16 are each exactly a float64 value.
#ifndef ATTN_CHECKPOINT_SAFETENSORS_H_
#define ATTN_CHECKPOINT_SAFETENSORS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "checkpoint/mapped_file.h"
#include "checkpoint/stored_tensor.h"

namespace attn {

// The largest header attn reads: real checkpoints' headers are tens of KiB (one entry of
// about 100 bytes per tensor); the format's own limit is 100 MB.
constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 16ULL << 20;

// Parses and checks the header of a safetensors file whose whole content is
// bytes[0, size): every problem an InputError naming `file` and the tensor or field. On
// success, the tensors in header order and where the data buffer starts.
struct SafetensorsHeader {
  std::vector<StoredTensor> tensors;
  std::uint64_t data_start = 0;  // 8 + N
};
SafetensorsHeader parse_safetensors_header(const std::uint8_t* bytes, std::uint64_t size, const std::string& file);

class SafetensorsFile : public WeightsFile {
 public:
  // Maps `path` and checks its header (parse_safetensors_header).
  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const override { return file_.path(); }
  const std::vector<StoredTensor>& tensors() const override { return header_.tensors; }
  const StoredTensor* find(const std::string& name) const override;
  TensorView view(const StoredTensor& tensor) const override;

 private:
  MappedFile file_;
  SafetensorsHeader header_;
  std::unordered_map<std::string, std::size_t> index_;
};

}  // namespace attn

#endif  // ATTN_CHECKPOINT_SAFETENSORS_H_
