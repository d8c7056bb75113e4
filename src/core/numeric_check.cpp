#include "core/numeric_check.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
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

bool all_finite(const double* data, std::size_t n) {
  // Every recorded value passes through here, so the common case (all finite) is one
  // vectorizable pass over the bits: inf and NaN are the values whose exponent bits are
  // all ones, the only ones for which adding 1 to the exponent carries into the sign bit.
  // (An integer add and OR vectorize with the baseline's SSE2, which has no 64-bit
  // compare: a == on the exponent ran one element at a time there; a floating-point sum
  // would not vectorize without -ffast-math.)
  constexpr std::uint64_t kExponent = 0x7ff0000000000000ULL, kExponentOne = 0x0010000000000000ULL;
  std::uint64_t carries = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, data + i, sizeof bits);
    carries |= (bits & kExponent) + kExponentOne;
  }
  return (carries >> 63) == 0;
}

void check_finite(const std::string& name, const Shape& shape, const double* data, bool masked_infinity_allowed) {
  const std::size_t n = element_count(shape);
  if (all_finite(data, n)) return;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = data[i];
    if (std::isfinite(v) || (masked_infinity_allowed && v == -INFINITY)) continue;
    throw NumericError(fmt::format("{}{} is {}", name, shape.empty() ? "" : index_string(shape, i), cause_of(v)));
  }
}

RowValueNotFinite::RowValueNotFinite(std::string quantity, std::string consequence, std::size_t row, double value)
    : NumericError(fmt::format("row {}: {} is {}: {}", row, quantity, cause_of(value), consequence)),
      quantity_(std::move(quantity)),
      consequence_(std::move(consequence)),
      row_(row),
      value_(value) {}

std::string RowValueNotFinite::where(const std::string& name, const Shape& shape) const {
  const Shape rows(shape.begin(), shape.empty() ? shape.end() : shape.end() - 1);
  std::string index = rows.empty() ? "[:]" : index_string(rows, row_);
  if (!rows.empty()) index.insert(index.size() - 1, ", :");
  return fmt::format("{}{}: {} is {}: {}", name, index, quantity_, cause_of(value_), consequence_);
}

void check_finite(const std::string& name, const Tensor& tensor, bool masked_infinity_allowed) {
  check_finite(name, tensor.shape, tensor.data.data(), masked_infinity_allowed);
}

}  // namespace attn
