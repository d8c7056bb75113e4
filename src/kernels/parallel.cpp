#include "kernels/parallel.h"

#include <omp.h>

namespace attn {

void for_each_range(std::size_t n, const RangeBody& body, std::size_t min_elements) {
  if (n < min_elements) {
    body(0, n);
    return;
  }
  // schedule(static) by hand: thread t of T takes [n t / T, n (t + 1) / T).
#pragma omp parallel
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto threads = static_cast<std::size_t>(omp_get_num_threads());
    body(n * t / threads, n * (t + 1) / threads);
  }
}

}  // namespace attn
