#include "checkpoint/stored_tensor.h"

#include <cmath>

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

StoredType stored_type_of(Dtype dtype) {
  switch (dtype) {
    case Dtype::F64:
      return StoredType::F64;
    case Dtype::F32:
      return StoredType::F32;
    case Dtype::F16:
      return StoredType::F16;
    case Dtype::BF16:
      return StoredType::BF16;
    case Dtype::Other:
      break;
  }
  throw InternalError("stored_type_of: a dtype attn does not read");
}

double TensorView::operator[](std::size_t i) const { return widen_number(bytes_, stored_type_of(info_->dtype), i); }

void require_float_dtype(const StoredTensor& tensor, const std::string& file) {
  if (tensor.dtype == Dtype::Other)
    throw InputError(file, tensor.name,
                     fmt::format("dtype {} is not supported: attn reads F64, F32, F16 and BF16", tensor.dtype_name));
}

namespace {

std::string index_text(std::size_t flat, const Shape& shape) {
  std::vector<std::size_t> index(shape.size());
  for (std::size_t a = shape.size(); a-- > 0;) {
    index[a] = shape[a] ? flat % shape[a] : 0;
    flat = shape[a] ? flat / shape[a] : 0;
  }
  return fmt::format("[{}]", fmt::join(index, ", "));
}

}  // namespace

void widen_finite(const TensorView& view, const std::string& file, double* out) {
  const std::size_t n = view.size();
  for (std::size_t i = 0; i < n; ++i) {
    const double v = view[i];
    if (!std::isfinite(v))
      throw InputError(file, view.info().name,
                       fmt::format("expected finite weights, found {} at {}",
                                   std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf"), index_text(i, view.info().shape)));
    out[i] = v;
  }
}

}  // namespace attn
