#include "core/top_k.h"

#include <algorithm>

namespace attn {

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

std::vector<TokenProbability> top_tokens(const double* probabilities, std::size_t vocab_size, std::size_t k,
                                         const std::vector<std::size_t>& excluded) {
  std::vector<TokenProbability> top = top_tokens(probabilities, vocab_size, k + excluded.size());
  top.erase(std::remove_if(top.begin(), top.end(),
                           [&](const TokenProbability& t) {
                             return std::find(excluded.begin(), excluded.end(), t.id) != excluded.end();
                           }),
            top.end());
  if (top.size() > k) top.resize(k);
  return top;
}

}  // namespace attn
