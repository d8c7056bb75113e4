// The terminal walkthrough: reads a finished trace (and the model, for its weights) and
// prints each step in order: a numbered title, the formula, the shape equation with named
// axes on both sides, and the tensor printed the way NumPy prints it.
#ifndef ATTN_WALKTHROUGH_H_
#define ATTN_WALKTHROUGH_H_

#include <ostream>

#include "attn/array_format.h"
#include "attn/model.h"
#include "attn/trace.h"

namespace attn {

struct WalkthroughOptions {
  ArrayFormatOptions array;   // precision, summarization, line width
  bool show_weights = true;   // print W_q, W_k, W_v, W_o beside the projections
};

void print_walkthrough(std::ostream& out, const Trace& trace, const Model& model, const WalkthroughOptions& options);

}  // namespace attn

#endif  // ATTN_WALKTHROUGH_H_
