#include "present/explanations.h"

namespace attn {

namespace {

struct Explanation {
  std::string_view kind;
  const char* text;
};

// The rows of present/explanations.def, in its order.
constexpr Explanation kExplanations[] = {
#define ATTN_EXPLANATION(key, text) {key, text},
#include "present/explanations.def"
#undef ATTN_EXPLANATION
};

}  // namespace

const char* explanation_for(std::string_view step_kind) {
  for (const auto& entry : kExplanations)
    if (entry.kind == step_kind) return entry.text;
  return nullptr;
}

std::vector<std::string_view> explained_step_kinds() {
  std::vector<std::string_view> kinds;
  for (const auto& entry : kExplanations) kinds.push_back(entry.kind);
  return kinds;
}

}  // namespace attn
