// The backward pass (attn grad): from the loss back to every weight and every tensor of a
// forward run, by the chain rule, one step at a time in the reverse of the forward's
// order. Each gradient is recorded into the same trace as the forward's tensors, as
// grad.<name> (docs/trace-names.md), so that the walkthrough and the dumps read it as they
// read the forward.
#ifndef ATTN_BACKWARD_H_
#define ATTN_BACKWARD_H_

#include "attn/model.h"
#include "attn/run_input.h"
#include "attn/trace.h"

namespace attn {

// Runs the backward pass of the forward run recorded in `trace` (run_model with every
// entry kept). Records, in order:
//   - loss, shape []: the cross-entropy of input.labels, or sum(output ⊙ input.output_grad);
//   - grad.<name> of every forward entry that has a gradient (all but token ids and masks),
//     the last one first: grad.output.probabilities, grad.output.logits, ..., grad.input;
//   - grad.<path> of every weight, in parameters() order (attn/parameters.h).
// Returns the loss. InputError when the model defines no loss (check_loss_defined).
double run_backward(const Model& model, const RunInput& input, Trace& trace);

}  // namespace attn

#endif  // ATTN_BACKWARD_H_
