// Suggestions for names mistyped by a user: unknown keys, step kinds, example names.
#ifndef ATTN_CORE_DID_YOU_MEAN_H_
#define ATTN_CORE_DID_YOU_MEAN_H_

#include <string>
#include <vector>

namespace attn {

// The closest of `candidates` to `word` by edit distance (letters compared without case),
// or "" when none is close enough to be a typo of it.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace attn

#endif  // ATTN_CORE_DID_YOU_MEAN_H_
