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

// The shape a generator object gives: {"randn": [4, 8]} -> [4, 8]; {"randn": [4, 8], "std":
// 0.1} sets *std (when given) to 0.1.
Shape read_generator_shape(const JsonReader& reader, const Json& value, const std::string& path, double* std = nullptr);
// The generator a generator object names (its key other than "std").
std::string generator_kind(const Json& value);
// Whether `kind` names a generator ("randn", "xavier_uniform", ...).
bool is_generator_name(const std::string& kind);
// The shape nested arrays describe by their first elements ([[1, 2, 3], [4, 5, 6]] ->
// [2, 3]); reading the numbers then checks that every element agrees.
Shape nested_shape(const JsonReader& reader, const Json& value, const std::string& path);

// A generator's tensor (docs/model-file.md, "Initializers"): "randn" drawn from `rng` (times
// `std`), "zeros", "ones", "identity" (ones on the main diagonal, as np.eye(rows, cols)),
// and PyTorch's initializers drawn from the same NumPy stream: "normal_0.02" (GPT-2's),
// "xavier_uniform" (U(-a, a), a = sqrt(6 / (fan_in + fan_out))) and "kaiming_uniform"
// (nn.Linear's: U(-b, b), b = 1 / sqrt(fan_in)), fan_in = shape[0] for x @ W.
Tensor generate(NumpyRandom& rng, const std::string& kind, const Shape& shape, const AxisNames& axes, double std = 1.0);

}  // namespace attn

#endif  // ATTN_MODEL_TENSOR_VALUES_H_
