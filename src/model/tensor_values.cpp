#include "model/tensor_values.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace attn {

namespace {

const std::vector<std::string> kGenerators = {"randn",          "zeros",       "ones",           "identity",
                                              "xavier_uniform", "normal_0.02", "kaiming_uniform"};
const char* const kGeneratorList =
    "\"randn\", \"zeros\", \"ones\", \"identity\", \"xavier_uniform\", \"normal_0.02\", \"kaiming_uniform\"";

// PyTorch's fan-based initializers need a matrix (torch.nn.init: "Fan in and fan out can
// not be computed for tensor with fewer than 2 dimensions").
bool needs_matrix(const std::string& kind) {
  return kind == "identity" || kind == "xavier_uniform" || kind == "kaiming_uniform";
}

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
    reader.fail(path, fmt::format("expected numbers or one of {}, found \"{}\"{}", kGeneratorList, kind,
                                  suggestion.empty() ? "" : "; did you mean \"" + suggestion + "\"?"));
  }
  if (request.shape.empty())
    reader.fail(path, fmt::format("the shape is not implied here; write {{\"{}\": [...]}}", kind));
  if (needs_matrix(kind) && request.shape.size() != 2)
    reader.fail(path,
                fmt::format("\"{}\" needs a matrix, but this tensor has shape {}", kind, shape_string(request.shape)));
  return generate(context.rng, kind, request.shape, request.axes);
}

// {"randn": [4, 8]}: the shape is given, and must match an implied one.
Tensor read_generator_object(LoadContext& context, const Json& value, const std::string& path,
                             const TensorRequest& request) {
  double std = 1.0;
  const Shape shape = read_generator_shape(context.reader, value, path, &std);
  check_shape(context.reader, path, request, shape);
  const std::string kind = generator_kind(value);
  if (needs_matrix(kind) && shape.size() != 2)
    context.reader.fail(path, fmt::format("\"{}\" needs a matrix, found shape {}", kind, shape_string(shape)));
  return generate(context.rng, kind, shape, request.axes, std);
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
    context.reader.fail(path, fmt::format("expected {}array of numbers or {}, found {}",
                                          request.shape.empty() ? "an " : "a " + shape_string(request.shape) + " ",
                                          kGeneratorList, describe_json(value)));
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

std::string generator_kind(const Json& value) {
  for (auto it = value.begin(); it != value.end(); ++it)
    if (it.key() != "std") return it.key();
  return "";
}

bool is_generator_name(const std::string& kind) { return is_generator(kind); }

Shape read_generator_shape(const JsonReader& reader, const Json& value, const std::string& path, double* std) {
  const std::string kind = generator_kind(value);
  const Json* scale = value.contains("std") ? &value.at("std") : nullptr;
  const std::size_t keys = scale ? 2 : 1;
  if (value.size() != keys || !is_generator(kind))
    reader.fail(path, fmt::format("expected an object with one key, one of {}, whose value is the shape (and for "
                                  "\"randn\" a \"std\"), found {}",
                                  kGeneratorList, describe_json(value)));
  if (scale) {
    if (kind != "randn") reader.fail(json_child(path, "std"), "only \"randn\" takes a \"std\"");
    const double s = reader.finite_number(*scale, json_child(path, "std"));
    if (!(s > 0)) reader.fail(json_child(path, "std"), fmt::format("expected a positive number, found {}", s));
    if (std) *std = s;
  }
  const std::string shape_path = json_child(path, kind);
  const Json& dims = reader.array(value.at(kind), shape_path);
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

Tensor generate(NumpyRandom& rng, const std::string& kind, const Shape& shape, const AxisNames& axes, double std) {
  if (kind == "randn" || kind == "normal_0.02") {
    // np.random.randn(*shape) * std; normal_0.02 is np.random.normal(0, 0.02, shape), whose
    // every value is 0 + 0.02 * the same standard normal draw
    Tensor t = rng.randn(shape, axes);
    const double scale = kind == "normal_0.02" ? 0.02 : std;
    if (scale != 1.0)
      for (double& v : t.data) v = kind == "normal_0.02" ? 0.0 + scale * v : v * scale;
    return t;
  }
  if (kind == "xavier_uniform" || kind == "kaiming_uniform") {
    // A weight used as x @ W is (fan_in, fan_out): PyTorch's (out, in) transposed.
    const double fan_in = static_cast<double>(shape[0]), fan_out = static_cast<double>(shape[1]);
    double bound = 0;
    if (kind == "xavier_uniform") {
      // torch.nn.init.xavier_uniform_(gain=1): std = gain * sqrt(2 / (fan_in + fan_out)), a = sqrt(3) * std
      const double s = 1.0 * std::sqrt(2.0 / (fan_in + fan_out));
      bound = std::sqrt(3.0) * s;
    } else {
      // kaiming_uniform_(a=sqrt(5)), nn.Linear's: gain = sqrt(2 / (1 + a**2)), std = gain / sqrt(fan_in),
      // bound = sqrt(3) * std (= 1/sqrt(fan_in) up to rounding)
      const double a = std::sqrt(5.0);
      const double gain = std::sqrt(2.0 / (1 + std::pow(a, 2)));
      bound = std::sqrt(3.0) * (gain / std::sqrt(fan_in));
    }
    // np.random.uniform(-bound, bound, shape): low + (high - low) * random_sample(), C order
    Tensor t = Tensor::uninitialized(shape, axes);
    for (double& v : t.data) v = rng.uniform(-bound, bound);
    return t;
  }
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
