// A run on shapes alone: the memory estimate runs a model's own forward program with every
// step computing its result's shape and nothing else, no numbers and no allocation of
// them (forward/shape_run.h sums what the real run would hold). Each step function opens
// with its shapes, as it always has; in such a run it returns right after them:
//
//   if (shapes_only()) return shape_only(out_shape, out_axes);
//
// so a step's shape rule is written once, in the step itself, and the kernels are never
// reached. The switch is per thread (the estimate runs on the thread that asks for it).
#ifndef ATTN_CORE_SHAPE_ONLY_H_
#define ATTN_CORE_SHAPE_ONLY_H_

#include "attn/tensor.h"

namespace attn {

// Whether the steps on this thread compute shapes alone.
bool shapes_only();

// While it lives, the steps on this thread compute shapes alone.
class ShapesOnly {
 public:
  ShapesOnly();
  ~ShapesOnly();
  ShapesOnly(const ShapesOnly&) = delete;
  ShapesOnly& operator=(const ShapesOnly&) = delete;

 private:
  bool was_on_;
};

// A step's result in a run on shapes alone: its shape and axes, and no numbers.
Tensor shape_only(Shape shape, AxisNames axes);

// The bytes a tensor of `shape` takes as float64 numbers, held at 2^64 - 1 (a shape
// alone may be absurd: nothing is allocated for it).
std::uint64_t float64_bytes(const Shape& shape);

}  // namespace attn

#endif  // ATTN_CORE_SHAPE_ONLY_H_
