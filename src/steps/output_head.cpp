#include "steps/output_head.h"

#include <algorithm>

#include "steps/attention.h"

namespace attn {

Tensor vocabulary_logits(const Tensor& x, const Tensor& W, const Tensor& b) {
  // (B,T,N) @ (N,V) -> (B,T,V)
  return linear_projection(x, W, b, "V");
}

Tensor tied_vocabulary_logits(const Tensor& x, const Tensor& embedding) {
  // (V,N) -> (N,V), then (B,T,N) @ (N,V) -> (B,T,V)
  return linear_projection(x, transposed(embedding, {1, 0}), Tensor(), "V");
}

std::vector<TokenProbability> top_tokens(const double* probabilities, std::size_t vocab_size, std::size_t k) {
  std::vector<TokenProbability> all;
  all.reserve(vocab_size);
  for (std::size_t id = 0; id < vocab_size; ++id) all.push_back({id, probabilities[id]});
  k = std::min(k, vocab_size);
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                    [](const TokenProbability& a, const TokenProbability& b) {
                      return a.probability != b.probability ? a.probability > b.probability : a.id < b.id;
                    });
  all.resize(k);
  return all;
}

}  // namespace attn
