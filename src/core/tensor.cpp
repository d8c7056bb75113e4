#include "attn/tensor.h"
#include "attn/error.h"
#include "core/huge_pages.h"
#include "core/shape_only.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

template class std::vector<double, attn::UninitializedAllocator<double>>;

namespace attn {

Tensor::~Tensor() = default;

std::size_t element_count(const Shape& shape) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return n;
}

double pairwise_sum(const double* a, std::size_t n) {
  // NumPy's DOUBLE_pairwise_sum (numpy/core/src/umath/loops_utils.h.src), started from
  // add's identity 0 as np.add.reduce is.
  if (n < 8) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= 128) {
    double r[8];
    for (std::size_t k = 0; k < 8; ++k) r[k] = a[k];
    std::size_t i = 8;
    for (; i < n - n % 8; i += 8)
      for (std::size_t k = 0; k < 8; ++k) r[k] += a[i + k];
    double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  std::size_t half = n / 2;
  half -= half % 8;
  return pairwise_sum(a, half) + pairwise_sum(a + half, n - half);
}

Tensor::Tensor(Shape shape_in, AxisNames axes_in)
    : shape(std::move(shape_in)), axes(std::move(axes_in)), data(element_count(shape), 0.0) {
  if (axes.empty()) axes.assign(shape.size(), "");
  if (axes.size() != shape.size()) throw InternalError("Tensor: axes and shape differ in length");
}

Tensor Tensor::uninitialized(Shape shape_in, AxisNames axes_in) {
  Tensor t;
  t.data.resize(element_count(shape_in));  // UninitializedAllocator: no zeros written
  // Not touched yet: a big block can still get huge pages for its first touch.
  const std::size_t bytes = t.data.size() * sizeof(double);
  if (bytes >= kHugePageBlockBytes) advise_huge_pages(t.data.data(), bytes);
  t.shape = std::move(shape_in);
  t.axes = std::move(axes_in);
  if (t.axes.empty()) t.axes.assign(t.shape.size(), "");
  if (t.axes.size() != t.shape.size()) throw InternalError("Tensor: axes and shape differ in length");
  return t;
}

static std::size_t flat_index(const Shape& shape, const std::vector<std::size_t>& index) {
  if (index.size() != shape.size()) throw InternalError("Tensor::at: wrong number of indices");
  std::size_t flat = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (index[i] >= shape[i]) throw InternalError("Tensor::at: index out of range");
    flat = flat * shape[i] + index[i];
  }
  return flat;
}

double Tensor::at(const std::vector<std::size_t>& index) const {
  const std::size_t flat = flat_index(shape, index);
  // a stored weight is a matrix (rows, columns): its element widened where it lies
  return stored ? stored->at(flat / shape[1], flat % shape[1]) : data[flat];
}

double& Tensor::at(const std::vector<std::size_t>& index) {
  if (stored) throw InternalError("Tensor::at: a weight kept as stored is read-only");
  return data[flat_index(shape, index)];
}

std::string shape_with_axes(const Shape& shape, const AxisNames& axes) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += axes.size() == shape.size() && !axes[i].empty() ? "," : ", ";
    if (i < axes.size() && !axes[i].empty()) out += axes[i] + "=";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1 && (axes.empty() || axes[0].empty())) out += ",";
  return out + ")";
}

std::string shape_with_axes(const Tensor& t) { return shape_with_axes(t.shape, t.axes); }

std::string shape_string(const Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

Tensor reshaped(const Tensor& t, Shape shape, AxisNames axes) {
  if (element_count(shape) != (shapes_only() ? element_count(t.shape) : t.size()))
    throw InternalError(
        fmt::format("reshape {} -> {}: element counts differ", shape_string(t.shape), shape_string(shape)));
  if (shapes_only()) return shape_only(std::move(shape), std::move(axes));
  Tensor out;
  out.shape = std::move(shape);
  out.axes = std::move(axes);
  if (out.axes.empty()) out.axes.assign(out.shape.size(), "");
  out.data = t.data;
  return out;
}

namespace {

// dst (cols, rows) = src (rows, cols)ᵀ, both row-major, in 8x8 tiles so that reads and
// writes both stay within a few cache lines.
void transpose_matrix(const double* src, double* dst, std::size_t rows, std::size_t cols) {
  constexpr std::size_t kTile = 8;
  for (std::size_t r0 = 0; r0 < rows; r0 += kTile)
    for (std::size_t c0 = 0; c0 < cols; c0 += kTile) {
      const std::size_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (std::size_t c = c0; c < c1; ++c)
        for (std::size_t r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
    }
}

}  // namespace

Tensor transposed(const Tensor& t, const std::vector<std::size_t>& perm) {
  const std::size_t rank = t.rank();
  if (perm.size() != rank) throw InternalError("transpose: permutation has the wrong length");
  Shape out_shape(rank);
  AxisNames out_axes(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    if (perm[i] >= rank) throw InternalError("transpose: permutation names an axis the tensor lacks");
    out_shape[i] = t.shape[perm[i]];
    out_axes[i] = t.axes[perm[i]];
  }
  if (shapes_only()) return shape_only(std::move(out_shape), std::move(out_axes));
  Tensor out = Tensor::uninitialized(out_shape, out_axes);  // every element is written below
  if (rank == 0 || out.data.empty()) {
    out.data = t.data;
    return out;
  }

  // Leading axes kept in place and the last two swapped (k -> k_t, E -> Eᵀ): a batch of
  // matrix transposes.
  const bool swaps_last_two = rank >= 2 && perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2 && [&] {
    for (std::size_t i = 0; i + 2 < rank; ++i)
      if (perm[i] != i) return false;
    return true;
  }();
  if (swaps_last_two) {
    const std::size_t rows = t.shape[rank - 2], cols = t.shape[rank - 1], block = rows * cols;
    for (std::size_t i = 0; i < t.size() / block; ++i)
      transpose_matrix(t.data.data() + i * block, out.data.data() + i * block, rows, cols);
    return out;
  }

  // General case: walk the output in C order one last-axis row at a time; the input is
  // read with its own strides (a straight copy when the last axis stays last, as in
  // split and merge heads).
  std::vector<std::size_t> in_stride(rank, 1);
  for (std::size_t i = rank; i-- > 1;) in_stride[i - 1] = in_stride[i] * t.shape[i];
  std::vector<std::size_t> src_stride(rank);
  for (std::size_t i = 0; i < rank; ++i) src_stride[i] = in_stride[perm[i]];
  const std::size_t row_len = rank ? out_shape[rank - 1] : 1;
  const std::size_t row_stride = rank ? src_stride[rank - 1] : 1;
  std::vector<std::size_t> index(rank, 0);  // the current row's index over the leading output axes
  std::size_t src = 0;
  for (std::size_t flat = 0; flat < out.data.size(); flat += row_len) {
    double* dst = out.data.data() + flat;
    const double* from = t.data.data() + src;
    if (row_stride == 1) {
      std::copy(from, from + row_len, dst);
    } else {
      for (std::size_t j = 0; j < row_len; ++j) dst[j] = from[j * row_stride];
    }
    // Next row: advance the index over the leading axes, updating the source offset.
    for (std::size_t i = rank - 1; i-- > 0;) {
      src += src_stride[i];
      if (++index[i] < out_shape[i]) break;
      src -= src_stride[i] * out_shape[i];
      index[i] = 0;
    }
  }
  return out;
}

Tensor slice_first(const Tensor& t, std::size_t i) {
  if (t.rank() == 0 || i >= t.shape[0]) throw InternalError("slice_first: index out of range");
  Shape shape(t.shape.begin() + 1, t.shape.end());
  AxisNames axes(t.axes.begin() + 1, t.axes.end());
  Tensor out(shape, axes);
  const std::size_t n = out.size();
  std::copy(t.data.begin() + static_cast<std::ptrdiff_t>(i * n),
            t.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * n), out.data.begin());
  return out;
}

Tensor take_index(const Tensor& t, std::size_t axis, std::size_t index) {
  if (axis >= t.rank() || index >= t.shape[axis]) throw InternalError("take_index: index out of range");
  Shape shape = t.shape;
  AxisNames axes = t.axes;
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
  axes.erase(axes.begin() + static_cast<std::ptrdiff_t>(axis));
  Tensor out(shape, axes);
  std::size_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < axis; ++i) outer *= t.shape[i];
  for (std::size_t i = axis + 1; i < t.rank(); ++i) inner *= t.shape[i];
  const std::size_t n = t.shape[axis];
  for (std::size_t o = 0; o < outer; ++o)
    std::copy(t.data.begin() + static_cast<std::ptrdiff_t>((o * n + index) * inner),
              t.data.begin() + static_cast<std::ptrdiff_t>((o * n + index + 1) * inner),
              out.data.begin() + static_cast<std::ptrdiff_t>(o * inner));
  return out;
}

}  // namespace attn
