// dL/dW for every weight of the model, filled while the backward pass runs and recorded
// into the trace at its end, in parameters()'s order (attn/parameters.h).
#ifndef ATTN_BACKWARD_WEIGHT_GRADIENTS_H_
#define ATTN_BACKWARD_WEIGHT_GRADIENTS_H_

#include <vector>

#include "attn/model.h"
#include "attn/parameters.h"
#include "attn/trace.h"

namespace attn {

class WeightGradients {
 public:
  explicit WeightGradients(const Model& model);

  // Adds `gradient` to the weight's gradient (the first one is moved in: most weights are
  // used once).
  void add(const ParameterId& weight, Tensor gradient);
  // A fused projection's gradient, (N, H*d): split into heads.h.W_q ... when the model file
  // gave the block's matrices per head, since those are its weights.
  void add_projection(const ParameterId& fused, const AttentionWeights& w, Tensor gradient);
  // The weight's gradient so far, zero-filled when nothing was added yet: for the steps that
  // add into a table (the embedding's scatter-add, the position rows).
  Tensor& accumulator(const ParameterId& weight);

  // Records every weight's gradient as grad.<path>, in parameters() order, moving it into
  // the trace (the gradients are gone afterwards); a weight the run never used (an
  // embedding beside numbers, say) gets zeros.
  void record(Trace& trace);

 private:
  std::size_t index_of(const ParameterId& weight) const;
  std::vector<ConstParameter> weights_;
  std::vector<Tensor> gradients_;
  std::vector<bool> set_;
};

}  // namespace attn

#endif  // ATTN_BACKWARD_WEIGHT_GRADIENTS_H_
