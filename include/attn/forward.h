// The forward pass: calls the step functions in order and records each result into the
// trace under its documented name (docs/trace-names.md).
#ifndef ATTN_FORWARD_H_
#define ATTN_FORWARD_H_

#include "attn/model.h"
#include "attn/trace.h"

namespace attn {

// Runs the whole model: tokens and embeddings (or X), the encoder stack, the decoder
// stack and the output head, whichever the model has. Returns the last tensor computed
// (probabilities with an output head, else the last layer's output).
Tensor run_model(const Model& model, Trace& trace);

}  // namespace attn

#endif  // ATTN_FORWARD_H_
