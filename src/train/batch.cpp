// One batch of examples as the model's input, padded to the longest.
#include <algorithm>

#include "attn/train.h"
#include "core/require.h"

namespace attn {

namespace {

// Sequences of numbers, (L,N) each and of one length (read_dataset checks) -> (B,L,N).
Tensor stack(const Dataset& data, const std::vector<std::size_t>& batch, Tensor Example::*field, const char* axis) {
  const Tensor& first = data.examples[batch[0]].*field;
  const std::size_t L = first.shape[0], N = first.shape[1];
  Tensor out = Tensor::uninitialized({batch.size(), L, N}, {"B", axis, "N"});
  for (std::size_t b = 0; b < batch.size(); ++b) {
    const Tensor& t = data.examples[batch[b]].*field;
    require(t.size() == L * N, "batch_input: examples given as numbers differ in shape");
    std::copy(t.data.begin(), t.data.end(), out.data.begin() + static_cast<std::ptrdiff_t>(b * L * N));
  }
  return out;
}

TokenInput token_batch(const Dataset& data, const std::vector<std::size_t>& batch,
                       std::vector<std::string> Example::*field) {
  TokenInput input;
  input.batched = true;
  input.json_path = data.source;
  for (std::size_t i : batch) input.tokens.push_back(data.examples[i].*field);
  return input;
}

// The labels, (B,L) token ids, <PAD> after each example's end.
Tensor label_batch(const Model& model, const Dataset& data, const std::vector<std::size_t>& batch) {
  std::size_t L = 0;
  for (std::size_t i : batch) L = std::max(L, data.examples[i].labels.size());
  Tensor labels({batch.size(), L}, {"B", model.has_target() ? "T" : "S"});
  std::fill(labels.data.begin(), labels.data.end(), static_cast<double>(model.vocab.pad_id().value_or(0)));
  for (std::size_t b = 0; b < batch.size(); ++b) {
    const auto& ids = data.examples[batch[b]].labels;
    for (std::size_t t = 0; t < ids.size(); ++t) labels.data[b * L + t] = static_cast<double>(ids[t]);
  }
  return labels;
}

// output_grad, (B,L,W), zeros after each example's end (padded positions add nothing to the loss).
Tensor output_grad_batch(const Model& model, const Dataset& data, const std::vector<std::size_t>& batch) {
  std::size_t L = 0;
  const std::size_t W = data.examples[batch[0]].output_grad.shape[1];
  for (std::size_t i : batch) L = std::max(L, data.examples[i].output_grad.shape[0]);
  Tensor g({batch.size(), L, W}, {"B", model.has_target() ? "T" : "S", data.examples[batch[0]].output_grad.axes[1]});
  for (std::size_t b = 0; b < batch.size(); ++b) {
    const Tensor& e = data.examples[batch[b]].output_grad;
    std::copy(e.data.begin(), e.data.end(), g.data.begin() + static_cast<std::ptrdiff_t>(b * L * W));
  }
  return g;
}

}  // namespace

RunInput batch_input(const Model& model, const Dataset& data, const std::vector<std::size_t>& batch) {
  require(!batch.empty(), "batch_input: an empty batch");
  const Example& first = data.examples[batch[0]];
  RunInput input;
  input.batched = true;
  input.X = Tensor();
  input.source_tokens = TokenInput{};
  if (first.source.empty())
    input.X = stack(data, batch, &Example::x, "S");
  else
    input.source_tokens = token_batch(data, batch, &Example::source);
  input.target_X = Tensor();
  input.target_tokens = TokenInput{};
  if (model.has_target()) {
    input.target_X_batched = true;
    if (first.target.empty())
      input.target_X = stack(data, batch, &Example::target_x, "T");
    else
      input.target_tokens = token_batch(data, batch, &Example::target);
  }
  input.labels = Tensor();
  input.output_grad = Tensor();
  if (!first.labels.empty())
    input.labels = label_batch(model, data, batch);
  else
    input.output_grad = output_grad_batch(model, data, batch);
  return input;
}

}  // namespace attn
