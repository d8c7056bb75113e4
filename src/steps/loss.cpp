#include "steps/loss.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/require.h"

namespace attn {

namespace {

bool counted(double label, std::optional<std::size_t> ignore_id) {
  return !ignore_id || static_cast<std::size_t>(label) != *ignore_id;
}

// logits or probabilities (B,T,V) and labels (B,T): the sizes, checked.
std::size_t vocabulary_size(const Tensor& scores, const Tensor& labels, const char* what) {
  require(scores.rank() == 3 && labels.rank() == 2 && scores.shape[0] == labels.shape[0] &&
              scores.shape[1] == labels.shape[1],
          what);
  return scores.shape[2];
}

}  // namespace

std::size_t counted_labels(const Tensor& labels, std::optional<std::size_t> ignore_id) {
  std::size_t n = 0;
  for (double label : labels.data) n += counted(label, ignore_id) ? 1 : 0;
  return n;
}

double cross_entropy(const Tensor& logits, const Tensor& labels, std::optional<std::size_t> ignore_id) {
  // logits is (B,T,V), labels is (B,T) -> a scalar
  const std::size_t V = vocabulary_size(logits, labels, "cross_entropy: logits (B,T,V), labels (B,T)");
  const std::size_t n = counted_labels(labels, ignore_id);
  require(n > 0, "cross_entropy: every label is ignored (the loader refuses such labels)");
  double total = 0.0;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    if (!counted(labels.data[r], ignore_id)) continue;
    const double* x = logits.data.data() + r * V;
    const auto label = static_cast<std::size_t>(labels.data[r]);
    require(label < V, "cross_entropy: label out of range");
    // -log softmax(x)[label] = log Σ_j e^(x_j - max) - (x_label - max)
    const double max = *std::max_element(x, x + V);
    double sum = 0.0;
    for (std::size_t j = 0; j < V; ++j) sum += std::exp(x[j] - max);
    total += std::log(sum) - (x[label] - max);
  }
  return total / static_cast<double>(n);
}

Tensor cross_entropy_backward(const Tensor& probabilities, const Tensor& labels, std::optional<std::size_t> ignore_id) {
  // probabilities is (B,T,V), labels is (B,T) -> dlogits (B,T,V)
  const std::size_t V = vocabulary_size(probabilities, labels, "cross_entropy_backward: p (B,T,V), labels (B,T)");
  const double n = static_cast<double>(counted_labels(labels, ignore_id));
  Tensor dlogits(probabilities.shape, probabilities.axes);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    if (!counted(labels.data[r], ignore_id)) continue;
    const double* p = probabilities.data.data() + r * V;
    double* d = dlogits.data.data() + r * V;
    const auto label = static_cast<std::size_t>(labels.data[r]);
    for (std::size_t j = 0; j < V; ++j) d[j] = (p[j] - (j == label ? 1.0 : 0.0)) / n;
  }
  return dlogits;
}

Tensor cross_entropy_probabilities_gradient(const Tensor& probabilities, const Tensor& labels,
                                            std::optional<std::size_t> ignore_id) {
  // probabilities is (B,T,V), labels is (B,T) -> (B,T,V)
  const std::size_t V = vocabulary_size(probabilities, labels, "cross_entropy_probabilities_gradient: shapes");
  const double n = static_cast<double>(counted_labels(labels, ignore_id));
  Tensor dp(probabilities.shape, probabilities.axes);
  for (std::size_t r = 0; r < labels.size(); ++r) {
    if (!counted(labels.data[r], ignore_id)) continue;
    const std::size_t at = r * V + static_cast<std::size_t>(labels.data[r]);
    dp.data[at] = -1.0 / (n * probabilities.data[at]);
  }
  return dp;
}

double output_grad_loss(const Tensor& output, const Tensor& output_grad) {
  // output and output_grad are the same shape -> a scalar
  require(output.size() == output_grad.size(), "output_grad_loss: output_grad must have the output's shape");
  double sum = 0.0;
  for (std::size_t i = 0; i < output.size(); ++i) sum += output.data[i] * output_grad.data[i];
  return sum;
}

}  // namespace attn
