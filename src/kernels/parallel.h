// How work is split between threads, and the sizes that decide how a step runs. Internal
// to src/.
#ifndef ATTN_KERNELS_PARALLEL_H_
#define ATTN_KERNELS_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace attn {

// Up to this many multiply-adds (products) or elements (softmax), a step is computed the
// plain way, by the reference loops in its own file, as NumPy and a hand calculation
// would: every walkthrough's numbers are the same on any CPU. Above it, the fast kernels
// (attn's blocked products, a vectorized exp).
constexpr std::size_t kExactMaxElements = std::size_t{1} << 15;

// When a loop is worth the second thread. Waking it costs microseconds on an idle
// machine but can cost milliseconds on a busy one (measured: a residual add of 262K
// elements took 10 ms with two threads and 1.5 ms with one while other jobs ran), so only
// work of a few milliseconds is split: products, softmax over a million scores, the JSON
// dump's formatting, and scaling the scores (2M elements at the base size: 15% faster on
// two threads). Other memory-bound loops (adds, LayerNorm) stay on one thread; they gain
// little from a second core.
constexpr std::size_t kParallelMinElements = std::size_t{1} << 20;
// The exception: an activation under kExactMaxElements, by the plain formula (std::tanh,
// std::exp, std::erf: 10-30 ns an element), as a generated token's one row computes it
// right after its product, while the second thread still spins (cli/wait_policy.cpp).
// GPT-2's 3072 took 0.9 ms of a 21 ms token on one thread (perf).
constexpr std::size_t kParallelMinFormulaElements = std::size_t{1} << 11;

// Calls body(begin, end) on ranges that cover [0, n) once: from OpenMP's threads, one
// contiguous range each, when n >= min_elements; otherwise body(0, n) on this thread. For element-wise work, where an
// element's value does not depend on the thread that computes it, so the split changes no bit of the result.
using RangeBody = std::function<void(std::size_t begin, std::size_t end)>;
void for_each_range(std::size_t n, const RangeBody& body, std::size_t min_elements = kParallelMinElements);

}  // namespace attn

#endif  // ATTN_KERNELS_PARALLEL_H_
