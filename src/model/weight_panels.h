// A checkpoint's weight matrices laid out in panels (attn/tensor.h's StoredMatrix::in_panels)
// for a run that reads each of them once per generated token. Internal to src/.
#ifndef ATTN_MODEL_WEIGHT_PANELS_H_
#define ATTN_MODEL_WEIGHT_PANELS_H_

#include "attn/model.h"

namespace attn {

// Every matrix of `model` kept as stored that a product reads, in panels as the product
// reads it: the layers' projections (nn.Linear's (out, in) read transposed, GPT-2's Conv1D
// (in, out) as stored), an untied head, and a tied head's embedding (in panels of its
// transpose, the head's (N, V); a looked-up token's row is then read across the panels).
// An untied embedding stays as stored: a token reads one of its rows. Each matrix's pages
// of the mapped file are let go once its panels are made, so that the process holds the
// panels and not both. The numbers are the same; only their order in memory changes, and
// with it no sum (the kernels' order is set by the sizes alone).
void put_weights_in_panels(Model& model);

}  // namespace attn

#endif  // ATTN_MODEL_WEIGHT_PANELS_H_
