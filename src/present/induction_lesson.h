// The induction lesson (attn explain --example induction; docs/heads.md, "The induction
// lesson"): after the steps, the circuit taught on the run's own heads. Each head's scores
// (analysis/head_scores), the previous-token head's weights and the induction head's with
// its stripe below the diagonal, drawn again from the steps that showed them, and what
// ablating each head does to the copies (InductionLesson, measured by the command's own
// runs). The heads are kept from the trace as it streams by, before the walkthrough forgets
// them; every number the lesson prints is measured, none is written into its text.
#ifndef ATTN_PRESENT_INDUCTION_LESSON_H_
#define ATTN_PRESENT_INDUCTION_LESSON_H_

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/head_scores.h"
#include "attn/model.h"
#include "attn/trace.h"
#include "attn/walkthrough.h"
#include "present/page.h"

namespace attn {

class InductionLessonView {
 public:
  // Keeps the heads of a self-attention weights entry (batch item 0) and `step`, the step
  // that showed it; other entries pass by.
  void see(const TraceEntry& entry, const Trace& trace, int step);
  // The lesson, as asides after the steps.
  void write(Page& page, const Model& model, const InductionLesson& lesson) const;

  // One layer's self-attention heads, as the lesson keeps them.
  struct Layer {
    int layer = 0;
    int step = 0;               // the softmax step that showed its weights
    std::vector<Tensor> heads;  // (S,S) each
    std::vector<HeadScores> scores;
  };

 private:
  std::vector<Layer> layers_;
  std::vector<std::string> tokens_;  // the sequence, as the trace records it
  std::vector<std::size_t> ids_;     // the i-th distinct token is i
};

}  // namespace attn

#endif  // ATTN_PRESENT_INDUCTION_LESSON_H_
