// Pictures of attention for the walkthrough: heatmaps of the weights, a labelled table of
// one head's scores, per-head weight matrices side by side.
#ifndef ATTN_PRESENT_ATTENTION_VIEWS_H_
#define ATTN_PRESENT_ATTENTION_VIEWS_H_

#include "present/step_printers.h"

namespace attn {

// The sequence whose tokens label the keys of an attention block's entries.
Sequence key_sequence(const StepId& id);

// One (S,T) heatmap per head of each batch item, with token labels; the cells the mask hid
// (-inf in `masked_scores`, when given) drawn as masked.
void print_heatmaps(const Tensor& weights, const Tensor* masked_scores, const StepId& id, PrintContext& c);
// The scaled scores of one head as a boxed table, Q:"I" x K:"love", as seed 004 draws them.
void print_labeled_scores(const Tensor& scaled, const StepId& id, PrintContext& c);
// The per-head matrices the model file gives (seed 002), side by side, and which columns
// of the fused matrix each one is. `which` is "q", "k" or "v".
void print_heads_side_by_side(const char* which, const AttentionWeights& w, PrintContext& c);

// The RoPE pair the walkthrough works, forward and backward, in `t` (B,H,S,d) or, for
// grouped keys, (B,G,S,d): the cell's batch item, the key/value head of its query head,
// position 1 unless --cell names one (position 0 does not turn), and the column's pair
// (i, i + d/2). nullopt when the cell is outside t.
struct RopePairCell {
  std::size_t b, h, p, i;
};
std::optional<RopePairCell> rope_pair_cell(const Tensor& t, const PrintContext& c);

}  // namespace attn

#endif  // ATTN_PRESENT_ATTENTION_VIEWS_H_
