#include "backward/grad_scope.h"

#include "core/require.h"

namespace attn {

namespace {

// Whether the step's result has a B axis when computed (the position table and a mask
// without padding are the same for every sentence).
bool computed_with_batch_axis(StepKind kind) {
  return kind != StepKind::PositionalEncoding && kind != StepKind::Mask && kind != StepKind::WindowMask;
}

const TraceEntry& kept_entry(const Trace& trace, const StepId& id) {
  const TraceEntry* e = trace.find(id);
  require(e != nullptr, "backward: the trace did not keep " + trace_name(id) + " (attn grad keeps every entry)");
  return *e;
}

}  // namespace

Tensor GradScope::value(const StepId& forward) const {
  Tensor t = kept_entry(*trace_, forward).tensor;
  // Unbatched runs record (S,N) for the (1,S,N) the step computed.
  if (trace_->drops_batch_axis() && computed_with_batch_axis(forward.kind)) {
    t.shape.insert(t.shape.begin(), 1);
    t.axes.insert(t.axes.begin(), "B");
  }
  return t;
}

Operand GradScope::kept(const StepId& id) const {
  // A gradient the trace was told not to keep (Trace::keep_gradients): nobody prints its
  // operands, so its name is enough.
  if (id.gradient && !trace_->find(id)) return Operand{id, trace_name(id), {}, {}};
  const TraceEntry& e = kept_entry(*trace_, id);
  return Operand{id, e.name, e.tensor.shape, e.tensor.axes};
}

}  // namespace attn
