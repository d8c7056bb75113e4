// What the comparison runs of a session measure (session/comparison_runs.h), as the
// walkthrough shows it: the induction lesson (attn explain --example induction,
// docs/heads.md), how the run's sequence is copied with each head ablated, measured by runs
// of their own (the session makes them: a walkthrough only reads). Its positions are
// analysis/head_scores.h's copy_targets of the sequence.
#ifndef ATTN_INDUCTION_LESSON_H_
#define ATTN_INDUCTION_LESSON_H_

#include <cstddef>
#include <vector>

#include "attn/run_input.h"

namespace attn {

struct CopyAblation {
  std::vector<HeadAblation> heads;  // empty: the run without ablation
  std::size_t right = 0;            // the greedy picks that are the token to copy
  double mean_p = 0;                // the mean probability of the token to copy
};
struct InductionLesson {
  std::size_t positions = 0;            // the positions that copy
  std::vector<CopyAblation> ablations;  // the unablated run first, then each head zeroed, then each layer's heads
};

}  // namespace attn

#endif  // ATTN_INDUCTION_LESSON_H_
