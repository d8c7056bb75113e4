// A tensor as a checkpoint stores it, whatever the file: its name, dtype, shape and where
// its bytes lie, and a typed view that reads its numbers in place. A safetensors file
// (safetensors.h) and a pytorch_model.bin (pytorch_bin.h) are both a WeightsFile: a list
// of StoredTensors over one memory-mapped file, so the model's loader reads either the
// same way.
#ifndef ATTN_CHECKPOINT_STORED_TENSOR_H_
#define ATTN_CHECKPOINT_STORED_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/tensor.h"

namespace attn {

// How a stored tensor's numbers are laid out. attn reads the floating formats; the others
// are known by name (so that a checkpoint holding one is described, and refused only if a
// weight attn needs has it).
enum class Dtype { F64, F32, F16, BF16, Other };
// The floating formats as attn/tensor.h's StoredType (widen_number reads them);
// InternalError for Other, which require_float_dtype refuses first.
StoredType stored_type_of(Dtype dtype);

struct StoredTensor {
  std::string name;
  std::string dtype_name;  // as the file says: "F32", "I64", ...
  Dtype dtype = Dtype::Other;
  Shape shape;
  // The byte span of its numbers: in a safetensors file, in the data buffer after the
  // header; in a pytorch_model.bin, in the whole file.
  std::uint64_t begin = 0, end = 0;

  std::size_t element_count() const { return attn::element_count(shape); }
};

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

// A file of stored tensors, mapped and checked whole when it is opened.
class WeightsFile {
 public:
  virtual ~WeightsFile() = default;
  virtual const std::string& path() const = 0;
  // In the order the file lists them.
  virtual const std::vector<StoredTensor>& tensors() const = 0;
  // The tensor called `name`, or nullptr.
  virtual const StoredTensor* find(const std::string& name) const = 0;
  // A view of `tensor` (one of tensors()); InputError naming it unless its dtype is F64,
  // F32, F16 or BF16.
  virtual TensorView view(const StoredTensor& tensor) const = 0;
  // The heap its reading held at its most and let go once the file was open (a .bin's
  // pickles): the load's own share of the memory estimate.
  virtual std::uint64_t reading_bytes() const { return 0; }
};

// InputError naming `file` and the tensor unless its dtype is one attn reads.
void require_float_dtype(const StoredTensor& tensor, const std::string& file);

// The view's numbers widened into `out` (view.size() doubles), exactly. InputError naming
// `file`, the tensor and the element ("[3, 17]") at the first NaN or infinity.
void widen_finite(const TensorView& view, const std::string& file, double* out);

// (half_to_double and bfloat16_to_double, the F16 and BF16 numbers as float64: attn/tensor.h.)

}  // namespace attn

#endif  // ATTN_CHECKPOINT_STORED_TENSOR_H_
