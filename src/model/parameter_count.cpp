// The number of a model's learned numbers, from the one list of its weights.
#include "attn/model.h"
#include "attn/parameters.h"

namespace attn {

std::size_t parameter_count(const Model& m) {
  std::size_t n = 0;
  for (const ConstParameter& p : parameters(m)) n += p.tensor->size();
  return n;
}

}  // namespace attn
