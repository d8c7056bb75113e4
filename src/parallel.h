// When a loop is worth two threads. The row loops (softmax, LayerNorm, scaling) and the
// per-head products split their rows or heads over OpenMP threads; below this many
// elements the cost of waking a second thread (a few microseconds) outweighs the work, so
// the small models of the walkthrough run on one thread. Internal to src/.
#ifndef ATTN_SRC_PARALLEL_H_
#define ATTN_SRC_PARALLEL_H_

#include <cstddef>

namespace attn {

constexpr std::size_t kParallelMinElements = std::size_t{1} << 15;

}  // namespace attn

#endif  // ATTN_SRC_PARALLEL_H_
