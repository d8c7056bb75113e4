#include "attn/tensor.h"

#include <stdexcept>

#include <fmt/format.h>

namespace attn {

std::size_t element_count(const Shape& shape) {
  std::size_t n = 1;
  for (std::size_t d : shape) n *= d;
  return n;
}

Tensor::Tensor(Shape shape_in, AxisNames axes_in)
    : shape(std::move(shape_in)), axes(std::move(axes_in)), data(element_count(shape), 0.0) {
  if (axes.empty()) axes.assign(shape.size(), "");
  if (axes.size() != shape.size()) throw std::logic_error("Tensor: axes and shape differ in length");
}

static std::size_t flat_index(const Shape& shape, const std::vector<std::size_t>& index) {
  if (index.size() != shape.size()) throw std::out_of_range("Tensor::at: wrong number of indices");
  std::size_t flat = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (index[i] >= shape[i]) throw std::out_of_range("Tensor::at: index out of range");
    flat = flat * shape[i] + index[i];
  }
  return flat;
}

double Tensor::at(const std::vector<std::size_t>& index) const { return data[flat_index(shape, index)]; }
double& Tensor::at(const std::vector<std::size_t>& index) { return data[flat_index(shape, index)]; }

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
  if (element_count(shape) != t.size())
    throw std::logic_error(fmt::format("reshape {} -> {}: element counts differ", shape_string(t.shape),
                                       shape_string(shape)));
  Tensor out;
  out.shape = std::move(shape);
  out.axes = std::move(axes);
  if (out.axes.empty()) out.axes.assign(out.shape.size(), "");
  out.data = t.data;
  return out;
}

Tensor transposed(const Tensor& t, const std::vector<std::size_t>& perm) {
  const std::size_t rank = t.rank();
  if (perm.size() != rank) throw std::logic_error("transpose: permutation has the wrong length");
  Shape out_shape(rank);
  AxisNames out_axes(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    out_shape[i] = t.shape[perm[i]];
    out_axes[i] = t.axes[perm[i]];
  }
  Tensor out(out_shape, out_axes);
  // Strides of the input, then walk the output in C order.
  std::vector<std::size_t> in_stride(rank, 1);
  for (std::size_t i = rank; i-- > 1;) in_stride[i - 1] = in_stride[i] * t.shape[i];
  std::vector<std::size_t> src_stride(rank);
  for (std::size_t i = 0; i < rank; ++i) src_stride[i] = in_stride[perm[i]];
  std::vector<std::size_t> index(rank, 0);
  for (std::size_t flat = 0; flat < out.data.size(); ++flat) {
    std::size_t src = 0;
    for (std::size_t i = 0; i < rank; ++i) src += index[i] * src_stride[i];
    out.data[flat] = t.data[src];
    for (std::size_t i = rank; i-- > 0;) {
      if (++index[i] < out_shape[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

Tensor slice_first(const Tensor& t, std::size_t i) {
  if (t.rank() == 0 || i >= t.shape[0]) throw std::out_of_range("slice_first: index out of range");
  Shape shape(t.shape.begin() + 1, t.shape.end());
  AxisNames axes(t.axes.begin() + 1, t.axes.end());
  Tensor out(shape, axes);
  const std::size_t n = out.size();
  std::copy(t.data.begin() + static_cast<std::ptrdiff_t>(i * n),
            t.data.begin() + static_cast<std::ptrdiff_t>((i + 1) * n), out.data.begin());
  return out;
}

Tensor take_index(const Tensor& t, std::size_t axis, std::size_t index) {
  if (axis >= t.rank() || index >= t.shape[axis]) throw std::out_of_range("take_index: index out of range");
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
