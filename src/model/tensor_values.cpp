#include "model/tensor_values.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace attn {

namespace {

const std::vector<std::string> kGenerators = {"randn", "zeros", "ones", "identity"};

bool is_generator(const std::string& kind) {
  return std::find(kGenerators.begin(), kGenerators.end(), kind) != kGenerators.end();
}

// The file's shape must be the one the model implies, when it implies one.
void check_shape(const JsonReader& reader, const std::string& path, const TensorRequest& request, const Shape& got) {
  if (!request.shape.empty() && got != request.shape)
    reader.fail(path, fmt::format("expected shape {}{}, got {}", shape_string(request.shape),
                                  request.meaning.empty() ? "" : " (" + request.meaning + ")", shape_string(got)));
}

// "randn" alone: the model must imply the shape.
Tensor read_generator_name(LoadContext& context, const Json& value, const std::string& path,
                           const TensorRequest& request) {
  const JsonReader& reader = context.reader;
  const std::string kind = value.get<std::string>();
  if (!is_generator(kind)) {
    const std::string suggestion = did_you_mean(kind, kGenerators);
    reader.fail(path, fmt::format("expected numbers or one of \"randn\", \"zeros\", \"ones\", \"identity\", found "
                                  "\"{}\"{}",
                                  kind, suggestion.empty() ? "" : "; did you mean \"" + suggestion + "\"?"));
  }
  if (request.shape.empty())
    reader.fail(path, fmt::format("the shape is not implied here; write {{\"{}\": [...]}}", kind));
  if (kind == "identity" && request.shape.size() != 2)
    reader.fail(path,
                fmt::format("\"identity\" needs a matrix, but this tensor has shape {}", shape_string(request.shape)));
  return generate(context.rng, kind, request.shape, request.axes);
}

// {"randn": [4, 8]}: the shape is given, and must match an implied one.
Tensor read_generator_object(LoadContext& context, const Json& value, const std::string& path,
                             const TensorRequest& request) {
  const Shape shape = read_generator_shape(context.reader, value, path);
  check_shape(context.reader, path, request, shape);
  const std::string kind = value.begin().key();
  if (kind == "identity" && shape.size() != 2)
    context.reader.fail(path, fmt::format("\"identity\" needs a matrix, found shape {}", shape_string(shape)));
  return generate(context.rng, kind, shape, request.axes);
}

// Appends the numbers of `value` to `out` in row-major order, checking that every array at
// depth `axis` has shape[axis] elements.
void fill_nested(const JsonReader& reader, const Json& value, const std::string& path, const Shape& shape,
                 std::size_t axis, TensorData& out) {
  if (axis == shape.size()) {
    out.push_back(reader.finite_number(value, path));
    return;
  }
  if (!value.is_array())
    reader.fail(path,
                fmt::format("expected an array of {} (ragged array), found {}", shape[axis], describe_json(value)));
  if (value.size() != shape[axis])
    reader.fail(path, fmt::format("expected an array of {} like its neighbours (ragged array), found an array of {}",
                                  shape[axis], value.size()));
  for (std::size_t i = 0; i < value.size(); ++i)
    fill_nested(reader, value[i], json_index(path, i), shape, axis + 1, out);
}

Tensor read_nested_numbers(const JsonReader& reader, const Json& value, const std::string& path,
                           const TensorRequest& request) {
  const Shape shape = nested_shape(reader, value, path);
  // A wrong rank is reported before the numbers are read, a wrong size after.
  if (!request.shape.empty() && shape.size() != request.shape.size()) check_shape(reader, path, request, shape);
  TensorData data;
  data.reserve(element_count(shape));
  fill_nested(reader, value, path, shape, 0, data);
  check_shape(reader, path, request, shape);
  Tensor t;
  t.shape = shape;
  t.axes = request.axes.empty() ? AxisNames(shape.size(), "") : request.axes;
  t.data = std::move(data);
  return t;
}

Tensor read_tensor_value(LoadContext& context, const Json& value, const std::string& path,
                         const TensorRequest& request) {
  if (value.is_string()) return read_generator_name(context, value, path, request);
  if (value.is_object()) return read_generator_object(context, value, path, request);
  if (!value.is_array())
    context.reader.fail(
        path,
        fmt::format("expected {}array of numbers or \"randn\", \"zeros\", \"ones\", \"identity\", found {}",
                    request.shape.empty() ? "an " : "a " + shape_string(request.shape) + " ", describe_json(value)));
  return read_nested_numbers(context.reader, value, path, request);
}

}  // namespace

Tensor read_tensor(LoadContext& context, const Json& value, const std::string& path, const TensorRequest& request) {
  if (!context.reader.collecting()) return read_tensor_value(context, value, path, request);
  // A missing one (null) was reported already.
  const auto placeholder = [&] { return request.shape.empty() ? Tensor() : Tensor(request.shape, request.axes); };
  if (context.reader.is_missing(value)) return placeholder();
  try {
    return read_tensor_value(context, value, path, request);
  } catch (const InputError& e) {
    context.record(e);
  } catch (const AlreadyReported&) {
  }
  return placeholder();
}

Shape read_generator_shape(const JsonReader& reader, const Json& value, const std::string& path) {
  if (value.size() != 1 || !is_generator(value.begin().key()))
    reader.fail(path, fmt::format("expected an object with one key, \"randn\", \"zeros\", \"ones\" or \"identity\", "
                                  "whose value is the shape, found {}",
                                  describe_json(value)));
  const std::string kind = value.begin().key();
  const std::string shape_path = json_child(path, kind);
  const Json& dims = reader.array(value.begin().value(), shape_path);
  if (dims.empty()) reader.fail(shape_path, "expected a shape such as [4, 8], found an empty array");
  Shape shape;
  for (std::size_t i = 0; i < dims.size(); ++i)
    shape.push_back(reader.positive_integer(dims[i], json_index(shape_path, i), kMaxDimension));
  return shape;
}

Shape nested_shape(const JsonReader& reader, const Json& value, const std::string& path) {
  Shape shape;
  const Json* cur = &value;
  std::string p = path;
  while (cur->is_array()) {
    if (cur->empty()) reader.fail(p, "expected a non-empty array, found an empty array");
    shape.push_back(cur->size());
    cur = &(*cur)[0];
    p = json_index(p, 0);
  }
  // The reader's depth limit (64) bounds the walk above.
  if (shape.size() > 8)
    reader.fail(path, fmt::format("expected at most 8 nested array levels, found {}", shape.size()));
  return shape;
}

Tensor generate(NumpyRandom& rng, const std::string& kind, const Shape& shape, const AxisNames& axes) {
  if (kind == "randn") return rng.randn(shape, axes);
  Tensor t(shape, axes);
  if (kind == "ones") {
    std::fill(t.data.begin(), t.data.end(), 1.0);
  } else if (kind == "identity") {
    // Also for rectangular shapes: ones at (i, i) for i < min(rows, cols).
    const std::size_t cols = shape.back();
    const std::size_t rows = t.size() / cols;
    for (std::size_t i = 0; i < rows && i < cols; ++i) t.data[i * cols + i] = 1.0;
  }
  return t;
}

}  // namespace attn
