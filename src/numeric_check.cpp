#include "attn/numeric_check.h"

#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

namespace {

// The index of the element at flat position `flat` of a C-order tensor, as "[0, 1, 2, 3]".
std::string index_string(const Shape& shape, std::size_t flat) {
  std::vector<std::size_t> index(shape.size());
  for (std::size_t axis = shape.size(); axis-- > 0;) {
    index[axis] = flat % shape[axis];
    flat /= shape[axis];
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

// What a non-finite value most likely came from, for the learner.
const char* cause_of(double v) {
  if (std::isnan(v)) return "nan (0/0 or inf - inf)";
  return v > 0 ? "inf (overflow)" : "-inf (overflow)";
}

}  // namespace

bool allows_masked_infinity(const std::string& name) {
  const std::size_t dot = name.rfind('.');
  const std::string last = dot == std::string::npos ? name : name.substr(dot + 1);
  return last.find("mask") != std::string::npos;
}

void check_finite(const std::string& name, const Tensor& tensor) {
  const bool masked_ok = allows_masked_infinity(name);
  for (std::size_t i = 0; i < tensor.data.size(); ++i) {
    const double v = tensor.data[i];
    if (std::isfinite(v) || (masked_ok && v == -INFINITY)) continue;
    throw NumericError(fmt::format("{}{} is {}", name, tensor.rank() ? index_string(tensor.shape, i) : "", cause_of(v)));
  }
}

}  // namespace attn
