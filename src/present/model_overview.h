// A big model's lesson (docs/cli.md, "A big model"): from kOverviewFromHeads heads in its
// layers up, the terminal shows the first layer in full and every later layer as a line or
// two (its steps and where each of its heads looks), then an overview of every layer's
// heads: bertviz's model view in characters, each head as its strongest role (analysis/
// head_scores). The scores are measured from each layer's attention weights as the trace
// streams by, before the walkthrough forgets them.
#ifndef ATTN_PRESENT_MODEL_OVERVIEW_H_
#define ATTN_PRESENT_MODEL_OVERVIEW_H_

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/head_scores.h"
#include "attn/model.h"
#include "attn/trace.h"
#include "attn/walkthrough.h"
#include "present/page_renderer.h"

namespace attn {

// Whether `model` is big enough for the overview: more than kOverviewFromHeads heads in
// its longest stack (layers x heads).
bool is_big_model(const Model& model);

// One attention block's heads, scored.
struct BlockHeads {
  StepId block;  // any entry of the block: its stack, layer and block
  std::vector<HeadScores> heads;
};

class ModelOverview {
 public:
  // Scores the heads of an attention-weights entry (batch item `b`); other entries pass by.
  void see(const TraceEntry& entry, const Trace& trace, std::size_t b);
  const std::vector<BlockHeads>& blocks() const { return blocks_; }
  // The heads of the self-attention of `layer` (stack and layer of the id), or nullptr.
  const BlockHeads* self_attention(const StepId& layer) const;

 private:
  std::vector<BlockHeads> blocks_;
};

// "first .52": a head's strongest role and its score; a mixed head (no score reaches 0.5)
// as "~" and its largest score ("~self .31"), "-" when no score is defined.
std::string head_role_text(const HeadScores& scores);
// The line under a layer shown as a summary: "heads: 0 first .52, 1 prev .61, ...".
std::string heads_line(const BlockHeads& heads);
// The overview: a row per layer, a column per head, each cell a letter for the head's
// strongest role (capital when it takes at least half the weight) and its score; then the
// legend. Every line fits `width` when 6 + 5 x heads columns do.
std::string heads_grid(const std::vector<BlockHeads>& blocks, const Model& model, std::size_t width);
// The same as a table of words: the terminal's text is heads_grid; a web page's <table> has a
// row per layer, a column per head, each cell head_role_text ("prev .89", "~self .31").
TextTable heads_grid_table(const std::vector<BlockHeads>& blocks, const Model& model, std::size_t width);

}  // namespace attn

#endif  // ATTN_PRESENT_MODEL_OVERVIEW_H_
