#include "present/tensor_views.h"

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

std::size_t axis_of(const Tensor& t, const std::string& name) {
  for (std::size_t i = 0; i < t.rank(); ++i)
    if (t.axes[i] == name) return i;
  return t.rank();
}

std::size_t batch_count(const Tensor& t) {
  const std::size_t a = axis_of(t, "B");
  return a < t.rank() ? t.shape[a] : 1;
}

Tensor batch_item(const Tensor& t, std::size_t b) {
  return axis_of(t, "B") < t.rank() ? take_index(t, axis_of(t, "B"), b) : t;
}

Tensor head_matrix(const Tensor& t, std::size_t b, std::size_t h) {
  const Tensor item = batch_item(t, b);
  // the key/value heads of grouped-query attention are the "G" axis
  const std::size_t heads = axis_of(item, "H") < item.rank() ? axis_of(item, "H") : axis_of(item, "G");
  return take_index(item, heads, h);
}

std::string head_index(const Tensor& t, std::size_t b, std::size_t h) {
  return batch_count(t) > 1 || axis_of(t, "B") < t.rank() ? fmt::format("[{}][{}]", b, h) : fmt::format("[{}]", h);
}

std::vector<double> row_of(const Tensor& t, std::size_t row) {
  const std::size_t n = t.shape.back();
  return std::vector<double>(t.data.begin() + static_cast<std::ptrdiff_t>(row * n),
                             t.data.begin() + static_cast<std::ptrdiff_t>((row + 1) * n));
}

Tensor row_sums(const Tensor& t) {
  Tensor sums(Shape(t.shape.begin(), t.shape.end() - 1), AxisNames(t.axes.begin(), t.axes.end() - 1));
  const std::size_t T = t.shape.back();
  for (std::size_t r = 0; r < sums.size(); ++r) {
    double s = 0;
    for (std::size_t c = 0; c < T; ++c) s += t.data[r * T + c];
    sums.data[r] = s;
  }
  return sums;
}

Tensor view_split(const Tensor& projection, std::size_t num_heads) {
  // (B,S,H*d) -> (B,S,H,d), or (S,H*d) -> (S,H,d) unbatched
  const bool batched = projection.rank() == 3;
  const std::size_t S = projection.shape[batched ? 1 : 0];
  const std::size_t Hd = projection.shape.back();
  Shape shape = {S, num_heads, Hd / num_heads};
  AxisNames axes = {projection.axes[batched ? 1 : 0], "H", "d"};
  if (batched) {
    shape.insert(shape.begin(), projection.shape[0]);
    axes.insert(axes.begin(), projection.axes[0]);
  }
  return reshaped(projection, shape, axes);
}

void slice_index_error(const char* option, const std::string& axis, std::size_t size, std::size_t index) {
  throw InputError(option, "", fmt::format("expected an index below {}={}, found {}", axis, size, index));
}

namespace {

Tensor pick(const Tensor& t, const std::string& axis, std::size_t index, const char* option) {
  const std::size_t a = axis_of(t, axis);
  if (a == t.rank()) return t;
  if (index >= t.shape[a]) slice_index_error(option, axis, t.shape[a], index);
  return take_index(t, a, index);
}

}  // namespace

Tensor selected_slice(const Tensor& t, const StepFilter& filter) {
  Tensor s = t;
  if (filter.batch) s = pick(s, "B", *filter.batch, "--batch");
  if (filter.head) s = pick(s, "H", *filter.head, "--head");
  return s;
}

}  // namespace attn
