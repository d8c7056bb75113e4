// A tensor in a model file: nested arrays of numbers, or a generator: "randn", "zeros",
// "ones" or "identity" alone where the model implies the shape ("W_q": "randn"), or with
// its shape where it does not ({"randn": [4, 8]}).
#ifndef ATTN_MODEL_TENSOR_VALUES_H_
#define ATTN_MODEL_TENSOR_VALUES_H_

#include <string>

#include "attn/tensor.h"
#include "core/numpy_random.h"
#include "model/json_reader.h"
#include "model/load_context.h"

namespace attn {

// What a tensor field must hold: its shape when the model implies one, and what the
// axes mean, for the message when the file disagrees.
struct TensorRequest {
  Shape shape;  // empty: not implied; the value must give it
  AxisNames axes;
  std::string meaning;  // "d_model x H*d_head"
};

// The tensor at `path`, of the requested shape. "randn" draws from context.rng. In collect
// mode a bad tensor is recorded and read as zeros of the implied shape, so that the rest of
// the file is still checked.
Tensor read_tensor(LoadContext& context, const Json& value, const std::string& path, const TensorRequest& request);

// The shape a generator object gives: {"randn": [4, 8]} -> [4, 8].
Shape read_generator_shape(const JsonReader& reader, const Json& value, const std::string& path);
// The shape nested arrays describe by their first elements ([[1, 2, 3], [4, 5, 6]] ->
// [2, 3]); reading the numbers then checks that every element agrees.
Shape nested_shape(const JsonReader& reader, const Json& value, const std::string& path);

// A generator's tensor: "randn" drawn from `rng`, "zeros", "ones", or "identity" (ones on
// the main diagonal, as np.eye(rows, cols)).
Tensor generate(NumpyRandom& rng, const std::string& kind, const Shape& shape, const AxisNames& axes);

}  // namespace attn

#endif  // ATTN_MODEL_TENSOR_VALUES_H_
