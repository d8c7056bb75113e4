// Non-finite values in computed tensors. JSON cannot hold NaN or infinity, but finite
// inputs can still overflow (1e200 * 1e200) or give 0/0; such a value must be reported
// with the tensor and the position it appeared at, never printed as silent garbage.
#ifndef ATTN_CORE_NUMERIC_CHECK_H_
#define ATTN_CORE_NUMERIC_CHECK_H_

#include <cstddef>
#include <string>

#include "attn/error.h"
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

// Whether every one of the n values at `data` is finite (no inf, no NaN): one pass over the
// bits, which vectorizes; check_finite's test, for a kernel that checks as it computes.
bool all_finite(const double* data, std::size_t n);

// A step's value computed once per row (LayerNorm's variance, RMSNorm's mean square) that
// is not finite: the row's output would be finite garbage (beta, or 0) that no check of the
// output sees. Thrown by the step, which knows the row but not its trace name; the forward,
// which knows the name, says where() (forward/trace_scope.h).
class RowValueNotFinite : public NumericError {
 public:
  // `quantity`: "the variance of the row"; `consequence`: what the row would become,
  // "every value would be beta"; `row`: the row's number in C order.
  RowValueNotFinite(std::string quantity, std::string consequence, std::size_t row, double value);
  // "decoder.0.norm1[0, 1, :]: the variance of the row is inf (overflow): every value would
  // be beta" for the step's entry `name` of shape `shape` (whose last axis is the row's).
  std::string where(const std::string& name, const Shape& shape) const;

 private:
  std::string quantity_, consequence_;
  std::size_t row_;
  double value_;
};

}  // namespace attn

#endif  // ATTN_CORE_NUMERIC_CHECK_H_
