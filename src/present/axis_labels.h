// Labels for the rows and columns of a printed table or heatmap. Internal to src/.
#ifndef ATTN_PRESENT_AXIS_LABELS_H_
#define ATTN_PRESENT_AXIS_LABELS_H_

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include "attn/error.h"

namespace attn {

// `labels` when given (one per row or column, else InternalError naming `caller`),
// or the indices "0", "1", ... when there are none (a model without a vocabulary).
inline std::vector<std::string> labels_or_indices(const std::vector<std::string>& labels, std::size_t count,
                                                  const char* which, const char* caller) {
  if (labels.empty()) {
    std::vector<std::string> indices;
    for (std::size_t i = 0; i < count; ++i) indices.push_back(std::to_string(i));
    return indices;
  }
  if (labels.size() != count)
    throw InternalError(fmt::format("{}: {} {} labels for {} {}s", caller, labels.size(), which, count, which));
  return labels;
}

}  // namespace attn

#endif  // ATTN_PRESENT_AXIS_LABELS_H_
