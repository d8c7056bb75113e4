// The k largest of a row of values, for printing the most probable next tokens. Internal
// to src/.
#ifndef ATTN_CORE_TOP_K_H_
#define ATTN_CORE_TOP_K_H_

#include <cstddef>
#include <vector>

namespace attn {

struct TokenProbability {
  std::size_t id;
  double probability;
};

// The k most probable ids of one row of V probabilities, most probable first (ties: lower id first).
std::vector<TokenProbability> top_tokens(const double* probabilities, std::size_t vocab_size, std::size_t k);
// The same, leaving out the ids in `excluded` (tokens a model never writes: <PAD>, <UNK>, <BOS>).
std::vector<TokenProbability> top_tokens(const double* probabilities, std::size_t vocab_size, std::size_t k,
                                         const std::vector<std::size_t>& excluded);

}  // namespace attn

#endif  // ATTN_CORE_TOP_K_H_
