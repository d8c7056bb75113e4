#include "core/shape_only.h"

#include <cstdint>
#include <utility>

namespace attn {

namespace {

thread_local bool g_shapes_only = false;

}  // namespace

bool shapes_only() { return g_shapes_only; }

ShapesOnly::ShapesOnly() : was_on_(g_shapes_only) { g_shapes_only = true; }

ShapesOnly::~ShapesOnly() { g_shapes_only = was_on_; }

Tensor shape_only(Shape shape, AxisNames axes) {
  Tensor t;
  if (axes.empty()) axes.assign(shape.size(), "");
  t.shape = std::move(shape);
  t.axes = std::move(axes);
  return t;
}

std::uint64_t float64_bytes(const Shape& shape) {
  long double bytes = 8;
  for (const std::size_t n : shape) bytes *= static_cast<long double>(n);
  return bytes >= 1.8e19L ? UINT64_MAX : static_cast<std::uint64_t>(bytes);
}

}  // namespace attn
