// The backward pass's worked arithmetic, as worked_arithmetic.h's for the forward: one row
// or one element of a gradient computed in full, as text (lines ending in "\n"), never
// printed here.
#ifndef ATTN_PRESENT_WORKED_BACKWARD_H_
#define ATTN_PRESENT_WORKED_BACKWARD_H_

#include <string>
#include <string_view>
#include <vector>

#include "present/worked_arithmetic.h"

namespace attn {

// One row of the softmax's backward, w the row's weights, dw dL/dw:
//   dL/dx = w ⊙ (dw - Σ_j dw_j w_j)
std::string worked_softmax_backward_row(const std::vector<double>& w, const std::vector<double>& dw,
                                        std::string_view result_name, const WorkedOptions& options = {});

// The cross-entropy loss, one line per position: its label, p(label) and -log p(label)
// ("ignored" for a <PAD> label), then the mean over the counted positions.
struct LossPosition {
  std::string where;  // "[0] after \"<BOS>\"", the position as the walkthrough names it
  std::string label;  // the label's token
  double probability = 0;
  bool ignored = false;
};
std::string worked_cross_entropy(const std::vector<LossPosition>& positions, double loss,
                                 const WorkedOptions& options = {});

// One position's dL/dlogits = (p - onehot(label)) / n, p the position's probabilities: the
// label's entry and another worked, then the row.
std::string worked_cross_entropy_gradient_row(const std::vector<double>& p, std::size_t label,
                                              std::string_view label_token, std::size_t n, std::string_view result_name,
                                              const WorkedOptions& options = {});

// One RoPE pair backward: the forward turned (x[i], x[i + d/2]) of position p by the angle
// p·θ_i, so dL/dx is dL/dy turned back, by the transposed rotation:
//   dL/dx[i] = dL/dy[i]·cos + dL/dy[i + d/2]·sin,  dL/dx[i + d/2] = dL/dy[i + d/2]·cos - dL/dy[i]·sin
// `first` and `second` are dL/dy[i] and dL/dy[i + d/2]; names.result names dL/dx's row,
// names.input dL/dy's.
std::string worked_rope_pair_backward(double first, double second, std::size_t position, std::size_t pair,
                                      std::size_t d_head, double theta, const RopeNames& names,
                                      const WorkedOptions& options = {});

// One element of repeat_kv's backward: a key/value head read by several query heads gets
// the sum of their gradients. `terms` are dL/d(repeated)[h] of the query heads h sharing it,
// `term_names` their names ("dL/dK_rep[0][1][2][0]"), `shared_by` "query heads 0, 1".
std::string worked_repeat_kv_backward(const std::vector<double>& terms, const std::vector<std::string>& term_names,
                                      std::string_view result_name, std::string_view shared_by,
                                      const WorkedOptions& options = {});

}  // namespace attn

#endif  // ATTN_PRESENT_WORKED_BACKWARD_H_
