// Non-finite values in computed tensors. JSON cannot hold NaN or infinity, but finite
// inputs can still overflow (1e200 * 1e200) or give 0/0; such a value must be reported
// with the tensor and the position it appeared at, never printed as silent garbage.
#ifndef ATTN_CORE_NUMERIC_CHECK_H_
#define ATTN_CORE_NUMERIC_CHECK_H_

#include <string>

#include "attn/tensor.h"

namespace attn {

// Throws NumericError for the first (in C order) value of `tensor` that is NaN or
// infinite, naming the tensor and its full index:
//   encoder.0.attention.scores[0, 1, 2, 3] is inf (overflow)
// except -inf when `masked_infinity_allowed`: the documented way for a mask, and for the
// scores a mask was added to, to say "hidden".
void check_finite(const std::string& name, const Tensor& tensor, bool masked_infinity_allowed = false);
// The same for element_count(shape) values at `data`, in C order.
void check_finite(const std::string& name, const Shape& shape, const double* data,
                  bool masked_infinity_allowed = false);

}  // namespace attn

#endif  // ATTN_CORE_NUMERIC_CHECK_H_
