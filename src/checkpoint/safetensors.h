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

#include "attn/tensor.h"
#include "checkpoint/mapped_file.h"

namespace attn {

// How a stored tensor's numbers are laid out. attn reads the floating formats; the others
// are known by name (so that a checkpoint holding one is described, and refused only if a
// weight attn needs has it).
enum class Dtype { F64, F32, F16, BF16, Other };
// The floating formats as attn/tensor.h's StoredType (widen_number reads them);
// InternalError for Other, which require_float_dtype refuses first.
StoredType stored_type_of(Dtype dtype);

// The largest header attn reads: real checkpoints' headers are tens of KiB (one entry of
// about 100 bytes per tensor); the format's own limit is 100 MB.
constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 16ULL << 20;

struct StoredTensor {
  std::string name;
  std::string dtype_name;  // as the header says: "F32", "I64", ...
  Dtype dtype = Dtype::Other;
  Shape shape;
  std::uint64_t begin = 0, end = 0;  // byte span in the data buffer (after the header)

  std::size_t element_count() const { return attn::element_count(shape); }
};

// Parses and checks the header of a safetensors file whose whole content is
// bytes[0, size): every problem an InputError naming `file` and the tensor or field. On
// success, the tensors in header order and where the data buffer starts.
struct SafetensorsHeader {
  std::vector<StoredTensor> tensors;
  std::uint64_t data_start = 0;  // 8 + N
};
SafetensorsHeader parse_safetensors_header(const std::uint8_t* bytes, std::uint64_t size, const std::string& file);

// One stored tensor's numbers, read in place: element i as the float64 it is exactly.
class TensorView {
 public:
  TensorView(const StoredTensor& info, const std::uint8_t* bytes) : info_(&info), bytes_(bytes) {}
  const StoredTensor& info() const { return *info_; }
  std::size_t size() const { return info_->element_count(); }
  double operator[](std::size_t i) const;
  // Where number 0 lies (any alignment).
  const std::uint8_t* bytes() const { return bytes_; }

 private:
  const StoredTensor* info_;
  const std::uint8_t* bytes_;
};

class SafetensorsFile {
 public:
  // Maps `path` and checks its header (parse_safetensors_header).
  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return file_.path(); }
  const std::vector<StoredTensor>& tensors() const { return header_.tensors; }
  // The tensor called `name`, or nullptr.
  const StoredTensor* find(const std::string& name) const;
  // A view of `tensor` (one of tensors()); InputError naming it unless its dtype is F64,
  // F32, F16 or BF16.
  TensorView view(const StoredTensor& tensor) const;

 private:
  MappedFile file_;
  SafetensorsHeader header_;
  std::unordered_map<std::string, std::size_t> index_;
};

// InputError naming `file` and the tensor unless its dtype is one attn reads.
void require_float_dtype(const StoredTensor& tensor, const std::string& file);

// The view's numbers widened into `out` (view.size() doubles), exactly. InputError naming
// `file`, the tensor and the element ("[3, 17]") at the first NaN or infinity.
void widen_finite(const TensorView& view, const std::string& file, double* out);

// (half_to_double and bfloat16_to_double, the F16 and BF16 numbers as float64: attn/tensor.h.)

}  // namespace attn

#endif  // ATTN_CHECKPOINT_SAFETENSORS_H_
