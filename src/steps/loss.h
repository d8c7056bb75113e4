// The loss: the one number the backward pass differentiates. With an output head, the
// cross-entropy of the model's probabilities against the labels (the token that should come
// next at each position); without one, sum(output ⊙ output_grad), whose gradient with
// respect to the output is output_grad itself (PyTorch's y.backward(output_grad)).
#ifndef ATTN_STEPS_LOSS_H_
#define ATTN_STEPS_LOSS_H_

#include <cstddef>
#include <optional>

#include "attn/tensor.h"

namespace attn {

// logits is (B,T,V), labels is (B,T) of token ids -> the mean over the counted positions of
// -log softmax(logits)[label], where a position counts unless its label is ignore_id (<PAD>).
// As PyTorch's F.cross_entropy(logits, labels, ignore_index=pad_id): log-softmax from the
// logits, -log p = log Σ_j e^(x_j - max) - (x_label - max), never log(0). InternalError when
// no position counts (the model loader refuses such labels).
double cross_entropy(const Tensor& logits, const Tensor& labels, std::optional<std::size_t> ignore_id);

// The number of counted positions (labels other than ignore_id): the n of the mean.
std::size_t counted_labels(const Tensor& labels, std::optional<std::size_t> ignore_id);

// probabilities is (B,T,V) = softmax(logits), labels is (B,T) -> dlogits (B,T,V):
// (p - onehot(label)) / n at a counted position, 0 at an ignored one. Softmax and -log taken
// together, as PyTorch differentiates log_softmax.
Tensor cross_entropy_backward(const Tensor& probabilities, const Tensor& labels, std::optional<std::size_t> ignore_id);

// probabilities is (B,T,V), labels is (B,T) -> dL/dprobabilities (B,T,V): -1 / (n p[label])
// at each counted position's label, 0 everywhere else (the loss reads one probability per
// position). -inf where that probability underflowed to 0.
Tensor cross_entropy_probabilities_gradient(const Tensor& probabilities, const Tensor& labels,
                                            std::optional<std::size_t> ignore_id);

// output and output_grad have the same shape -> Σ output ⊙ output_grad, summed in order.
// Its gradient with respect to output is output_grad.
double output_grad_loss(const Tensor& output, const Tensor& output_grad);

}  // namespace attn

#endif  // ATTN_STEPS_LOSS_H_
