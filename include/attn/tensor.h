// A dense float64 tensor, row-major (C order, like NumPy), with a name for each axis.
//
// Axis names follow the paper: B batch, S sequence, N d_model, H heads, d head size,
// F d_ff, V vocabulary. They travel with the data so that every printed shape can say
// which axis is which: (B=2,H=2,S=6,d=2).
#ifndef ATTN_TENSOR_H_
#define ATTN_TENSOR_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attn {

using Shape = std::vector<std::size_t>;
using AxisNames = std::vector<std::string>;

// std::allocator, except that vector(n) and resize(n) leave new doubles uninitialized
// (default-initialization) instead of writing zeros: a step writes every element of its
// result anyway, and zero-filling first was an extra pass over every tensor's memory.
// Number of elements a shape holds; 1 for the empty shape (a scalar).
std::size_t element_count(const Shape& shape);

template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

// A tensor's values. Comparable with std::vector<double> (the tests compare with lists).
using TensorData = std::vector<double, UninitializedAllocator<double>>;
}  // namespace attn
// Compiled once, in core (tensor.cpp), at the libraries' -O3. The executable's own objects
// are compiled at -O1 (src/cli/CMakeLists.txt), where the vector's destructor keeps an
// empty loop over every element (its allocator's destroy), and the linker gives every
// caller the executable's copy of an inline function: freeing a 268 MB score tensor walked
// its 33.5M elements (3 to 5% of a 2048-token forward, by perf). Tensor's destructor is
// out of line for the same reason.
extern template class std::vector<double, attn::UninitializedAllocator<double>>;
namespace attn {
inline bool operator==(const TensorData& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}
inline bool operator==(const std::vector<double>& a, const TensorData& b) { return b == a; }
// A copy as a plain vector, for functions that take one (small rows, worked arithmetic).
inline std::vector<double> to_vector(const TensorData& values) { return {values.begin(), values.end()}; }

// How a checkpoint stores numbers (safetensors' F64, F32, F16, BF16): each one exactly a
// float64 value.
enum class StoredType : unsigned char { F64, F32, F16, BF16 };
// Bytes per number of `type`.
std::size_t stored_type_bytes(StoredType type);
// F16 (IEEE binary16) and BF16 (float32's upper half) bits as the float64 they are.
double half_to_double(std::uint16_t bits);
double bfloat16_to_double(std::uint16_t bits);
// Number i of `bytes` stored as `type`, widened to the float64 it is. Every format is
// little-endian on disk, as on x86-64; it is read at any alignment.
double widen_number(const unsigned char* bytes, StoredType type, std::size_t i);

// A weight matrix (rows, columns) left where a checkpoint stores it, in the mapped file
// (model/hf_model.cpp): element (r, c) is number r * stride + c of `bytes`, or c * stride + r
// when `transposed` (nn.Linear's (out, in) read as (in, out)). The steps that read a weight
// widen each number to float64 as they read it (exact), so a run gives the bits it gives
// with the matrix widened first, with half the memory for F32 (a quarter for F16, BF16).
//
// A matrix may instead be laid out in panels (in_panels), made once for a run that reads
// every weight once per generated token: the matrix as read untransposed, (K, P), cut into
// panels of `panel` columns (64 bytes of numbers), each panel's K rows one after another,
// a 64-byte line per row. A token's product then reads memory in one stream per panel,
// where the stored rows of an (out, in) weight were read eight at a time, 4 KiB apart.
struct StoredMatrix {
  const unsigned char* bytes = nullptr;  // number 0, at any alignment (64-byte aligned in panels)
  StoredType type = StoredType::F64;
  std::size_t stride = 0;  // numbers between the rows as stored; in panels, K, the rows of a panel
  bool transposed = false;
  std::size_t panel = 0;             // columns a panel, or 0: rows as stored
  std::shared_ptr<const void> keep;  // the mapped file (or the panels), alive as long as a view of it is

  double at(std::size_t row, std::size_t column) const;
  // Row `row` of the matrix, `columns` numbers, widened into out.
  void widen_row(std::size_t row, std::size_t columns, double* out) const;
  // The same numbers read as the (columns, rows) transpose.
  StoredMatrix transpose() const;
  // This (rows, columns) matrix, as read, copied into panels of 64 bytes a row (the numbers
  // as stored, not widened; the last panel's missing columns zero). Not transposed. When
  // this matrix is read transposed, each panel's columns are whole stored rows that no later
  // panel reads: `read_through` (when given) is called with the bytes of each run of them
  // once they are copied, so that the caller may let go of them as the copy goes.
  StoredMatrix in_panels(std::size_t rows, std::size_t columns,
                         const std::function<void(const unsigned char*, std::size_t)>& read_through = {}) const;
};

// Where column c (< 64 / bytes) of a panel sits in its 64-byte line: BF16 numbers as
// 32-bit pairs, column t at 2t and column 16 + t at 2t + 1 (a shift and a mask widen a
// line's pairs to float32, no shuffle: product_rows_isa.cpp); the other types in order.
constexpr std::size_t panel_position(StoredType type, std::size_t c) {
  if (type != StoredType::BF16) return c;
  return c < 16 ? 2 * c : 2 * (c - 16) + 1;
}

struct Tensor {
  Shape shape;
  AxisNames axes;   // same length as shape
  TensorData data;  // product(shape) values, C order
  // A 2-D weight of a checkpoint left as stored (StoredMatrix): `data` is empty and the
  // numbers are read through this. Only the commands that run the model forward alone keep
  // weights so (LoadOptions::weights_as_stored); everything else sees `data`. Null for every
  // other tensor.
  std::shared_ptr<const StoredMatrix> stored;

  Tensor() = default;
  ~Tensor();  // in tensor.cpp (see TensorData)
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(const Tensor&) = default;
  Tensor& operator=(Tensor&&) noexcept = default;
  // A zero-filled tensor of the given shape; axes default to "" when not given.
  explicit Tensor(Shape shape, AxisNames axes = {});
  // The same with its values left unset, for a step that writes every one of them.
  static Tensor uninitialized(Shape shape, AxisNames axes = {});

  std::size_t rank() const { return shape.size(); }
  std::size_t size() const { return stored ? element_count(shape) : data.size(); }
  // Whether the tensor holds numbers (in `data`, or as stored): what "the model has this
  // weight" means.
  bool has_values() const { return !data.empty() || stored != nullptr; }
  std::size_t dim(std::size_t axis) const { return shape.at(axis); }
  bool empty() const { return shape.empty() && data.empty(); }

  // Element access by full index (slow path for tests and printers). A stored weight's
  // element is widened as it is read; writing one is an InternalError.
  double at(const std::vector<std::size_t>& index) const;
  double& at(const std::vector<std::size_t>& index);
};

// The sum of n contiguous values in NumPy's order (np.sum along a contiguous axis):
// pairwise, eight partial sums per block of up to 128, halves above. So a row sum or a
// mean here is NumPy's to the last bit, where a plain loop would not be (n >= 8).
double pairwise_sum(const double* values, std::size_t n);

// "(B=2,H=2,S=6,d=2)", or "(2, 6, 4)" when the tensor has no axis names.
std::string shape_with_axes(const Shape& shape, const AxisNames& axes);
std::string shape_with_axes(const Tensor& t);
// "[4, 3]": the NumPy-like plain form used in error messages.
std::string shape_string(const Shape& shape);

// The tensor with its numbers in `data`: a stored weight widened whole (for what reads a
// weight's numbers as a Tensor: a printer showing one weight, a dump writing one
// parameter, each freed after), any other tensor as it is.
Tensor widened(const Tensor& t);
// Widens `t` in place when it is stored (its `stored` dropped).
void widen_in_place(Tensor& t);

// Same data, new shape (NumPy's reshape on a C-contiguous array).
Tensor reshaped(const Tensor& t, Shape shape, AxisNames axes);

// Axes permuted like NumPy's transpose(perm): result axis i is input axis perm[i].
Tensor transposed(const Tensor& t, const std::vector<std::size_t>& perm);

// Sub-tensor t[i] along the first axis.
Tensor slice_first(const Tensor& t, std::size_t i);

// NumPy's t.take(index, axis): the sub-tensor at `index` of `axis`, that axis removed.
Tensor take_index(const Tensor& t, std::size_t axis, std::size_t index);

}  // namespace attn

#endif  // ATTN_TENSOR_H_
