// The runs a session makes beside its own, to compare with it: the same input without its
// ablation (--ablate shows both runs' next-token probabilities), and the induction lesson's
// runs, each head of the model's one stack zeroed in turn, then each layer's heads together
// (docs/heads.md). Runs of their own: the session's input is not touched.
#ifndef ATTN_SESSION_COMPARISON_RUNS_H_
#define ATTN_SESSION_COMPARISON_RUNS_H_

#include "attn/induction_lesson.h"
#include "attn/tensor.h"
#include "session/session.h"

namespace attn {

// The next-token probabilities of the session's input without its ablation (and without
// the lens), (B?,T,V) as Session::run returns them.
Tensor unablated_probabilities(const Session& session);

// The induction lesson's measurements: the copies of the input's first sequence
// (analysis/head_scores.h's copy_targets) without ablation, with each head of the model's
// one stack zeroed, then with each layer's heads zeroed together; without the input's
// --ablate and --lens.
InductionLesson induction_lesson(const Session& session);

}  // namespace attn

#endif  // ATTN_SESSION_COMPARISON_RUNS_H_
