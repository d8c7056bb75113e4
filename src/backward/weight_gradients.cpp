#include "backward/weight_gradients.h"

#include "core/require.h"

namespace attn {

WeightGradients::WeightGradients(const Model& model)
    : weights_(parameters(model)), gradients_(weights_.size()), set_(weights_.size(), false) {}

std::size_t WeightGradients::index_of(const ParameterId& weight) const {
  for (std::size_t i = 0; i < weights_.size(); ++i)
    if (weights_[i].id == weight) return i;
  throw InternalError("WeightGradients: " + parameter_name(weight) + " is not a weight of the model");
}

void WeightGradients::add(const ParameterId& weight, Tensor gradient) {
  const std::size_t i = index_of(weight);
  require(gradient.size() == weights_[i].tensor->size(), "WeightGradients: a gradient of another shape");
  gradient.shape = weights_[i].tensor->shape;
  gradient.axes = weights_[i].tensor->axes;
  if (!set_[i]) {
    gradients_[i] = std::move(gradient);
    set_[i] = true;
    return;
  }
  for (std::size_t k = 0; k < gradient.size(); ++k) gradients_[i].data[k] += gradient.data[k];
}

void WeightGradients::add_projection(const ParameterId& fused, const AttentionWeights& w, Tensor gradient) {
  if (w.heads.empty()) {
    add(fused, std::move(gradient));
    return;
  }
  // (N, H*d) -> H matrices (N, d): head h owns columns h*d .. h*d+d-1
  const std::size_t N = gradient.shape[0], Hd = gradient.shape[1], H = w.heads.size(), d = Hd / H;
  for (std::size_t h = 0; h < H; ++h) {
    Tensor head({N, d}, {"N", "d"});
    for (std::size_t r = 0; r < N; ++r)
      for (std::size_t c = 0; c < d; ++c) head.data[r * d + c] = gradient.data[r * Hd + h * d + c];
    ParameterId id = fused;
    id.head = static_cast<int>(h);
    add(id, std::move(head));
  }
}

Tensor& WeightGradients::accumulator(const ParameterId& weight) {
  const std::size_t i = index_of(weight);
  if (!set_[i]) {
    gradients_[i] = Tensor(weights_[i].tensor->shape, weights_[i].tensor->axes);
    set_[i] = true;
  }
  return gradients_[i];
}

void WeightGradients::record(Trace& trace) {
  for (std::size_t i = 0; i < weights_.size(); ++i) {
    if (!set_[i]) gradients_[i] = Tensor(weights_[i].tensor->shape, weights_[i].tensor->axes);
    trace.record(weight_gradient_id(weights_[i].id), std::move(gradients_[i]),
                 {Trace::weight(parameter_name(weights_[i].id), weights_[i].tensor->shape, weights_[i].tensor->axes)});
  }
}

}  // namespace attn
