// Timing for the micro-benchmarks in bench/: the processor time of the calling thread,
// which is steadier than the wall clock on a machine shared with other work.
#ifndef ATTN_BENCH_THREAD_TIME_H_
#define ATTN_BENCH_THREAD_TIME_H_

#include <algorithm>
#include <ctime>

namespace bench {

inline double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The least processor time `work` took in `repeats` runs.
template <typename F>
double best_seconds(int repeats, F&& work) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const double start = thread_seconds();
    work();
    best = std::min(best, thread_seconds() - start);
  }
  return best;
}

}  // namespace bench

#endif  // ATTN_BENCH_THREAD_TIME_H_
