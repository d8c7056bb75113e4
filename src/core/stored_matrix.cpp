// Weights read where a checkpoint stores them (attn/tensor.h's StoredMatrix), and the
// formats' numbers as the float64 values they are.
#include <cmath>
#include <cstring>
#include <limits>

#include "attn/error.h"
#include "attn/tensor.h"

namespace attn {

std::size_t stored_type_bytes(StoredType type) {
  switch (type) {
    case StoredType::F64:
      return 8;
    case StoredType::F32:
      return 4;
    case StoredType::F16:
    case StoredType::BF16:
      break;
  }
  return 2;
}

double half_to_double(std::uint16_t bits) {
  const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double value;
  if (exponent == 0)
    value = std::ldexp(static_cast<double>(mantissa), -24);  // subnormal: m · 2^-24
  else if (exponent == 31)
    value = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else
    value = std::ldexp(static_cast<double>(mantissa + 1024), exponent - 25);  // (1024 + m) · 2^(e-15-10)
  return sign ? -value : value;
}

double bfloat16_to_double(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return static_cast<double>(f);
}

// memcpy reads each number at any alignment.
double widen_number(const unsigned char* bytes, StoredType type, std::size_t i) {
  switch (type) {
    case StoredType::F64: {
      double v;
      std::memcpy(&v, bytes + 8 * i, 8);
      return v;
    }
    case StoredType::F32: {
      float v;
      std::memcpy(&v, bytes + 4 * i, 4);
      return static_cast<double>(v);
    }
    case StoredType::F16:
    case StoredType::BF16:
      break;
  }
  std::uint16_t v;
  std::memcpy(&v, bytes + 2 * i, 2);
  return type == StoredType::F16 ? half_to_double(v) : bfloat16_to_double(v);
}

double StoredMatrix::at(std::size_t row, std::size_t column) const {
  return widen_number(bytes, type, transposed ? column * stride + row : row * stride + column);
}

void StoredMatrix::widen_row(std::size_t row, std::size_t columns, double* out) const {
  if (!transposed && type == StoredType::F32) {  // the common case, without a switch per number
    const unsigned char* from = bytes + 4 * row * stride;
    for (std::size_t c = 0; c < columns; ++c) {
      float v;
      std::memcpy(&v, from + 4 * c, 4);
      out[c] = static_cast<double>(v);
    }
    return;
  }
  for (std::size_t c = 0; c < columns; ++c) out[c] = at(row, c);
}

StoredMatrix StoredMatrix::transpose() const {
  StoredMatrix t = *this;
  t.transposed = !transposed;
  return t;
}

Tensor widened(const Tensor& t) {
  Tensor copy = t;
  widen_in_place(copy);
  return copy;
}

void widen_in_place(Tensor& t) {
  if (!t.stored) return;
  if (t.rank() != 2) throw InternalError("widen_in_place: a stored weight is a matrix");
  const std::shared_ptr<const StoredMatrix> stored = std::move(t.stored);
  const std::size_t rows = t.shape[0], columns = t.shape[1];
  t.data.resize(rows * columns);
  for (std::size_t r = 0; r < rows; ++r) stored->widen_row(r, columns, t.data.data() + r * columns);
}

}  // namespace attn
