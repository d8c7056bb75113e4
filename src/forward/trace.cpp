#include "attn/trace.h"

#include <algorithm>

#include "attn/step_roles.h"
#include "core/numeric_check.h"
#include "core/shape_only.h"

namespace attn {

Operand Trace::operand(const StepId& id, const Tensor& tensor) const {
  if (drop_batch_axis_ && tensor.rank() > 0 && tensor.axes[0] == "B" && tensor.shape[0] == 1)
    return Operand{id, trace_name(id), Shape(tensor.shape.begin() + 1, tensor.shape.end()),
                   AxisNames(tensor.axes.begin() + 1, tensor.axes.end())};
  return Operand{id, trace_name(id), tensor.shape, tensor.axes};
}

Operand Trace::weight(const std::string& name, const Shape& shape, const AxisNames& axes) {
  return Operand{std::nullopt, name, shape, axes};
}

void Trace::record(const StepId& id, const Tensor& tensor, std::vector<Operand> operands, Check check) {
  if (!record_shared(id, tensor, operands, check)) return;
  TraceEntry entry{id, trace_name(id), Tensor(), std::move(operands)};
  entry.tensor.data = tensor.data;
  keep(std::move(entry), tensor);
}

void Trace::record(const StepId& id, Tensor&& tensor, std::vector<Operand> operands, Check check) {
  if (!record_shared(id, tensor, operands, check)) return;
  TraceEntry entry{id, trace_name(id), Tensor(), std::move(operands)};
  entry.tensor.data = std::move(tensor.data);
  keep(std::move(entry), tensor);
}

bool Trace::record_shared(const StepId& id, const Tensor& tensor, const std::vector<Operand>& operands, Check check) {
  // The shape as recorded; the data is the same either way (dropping a size-1 axis).
  const Operand recorded = operand(id, tensor);
  // NumericError: inf or NaN, named with its index as recorded. Checked even when nothing
  // keeps the tensor: a run must not succeed quietly on numbers that overflowed.
  // (a run on shapes alone, the memory estimate's, has no numbers to check)
  if (check == Check::Values && !shapes_only())
    check_finite(recorded.name, recorded.shape, tensor.data.data(), may_hold_masked_infinity(id.kind));
  if (sink_) sink_(TraceRecord{id, recorded.name, recorded.shape, recorded.axes, tensor.data.data(), operands});
  return keep_entries_ && (keep_gradients_ || !id.gradient);
}

void Trace::keep(TraceEntry entry, const Tensor& computed) {
  // The shape and axes as recorded: without the B axis in unbatched runs.
  Operand recorded = operand(entry.id, computed);
  entry.tensor.shape = std::move(recorded.shape);
  entry.tensor.axes = std::move(recorded.axes);
  entries_.push_back(std::move(entry));
  if (entry_observer_) entry_observer_(entries_.back());
}

void Trace::forget_entries_if(const std::function<bool(const TraceEntry&)>& drop) {
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(), drop), entries_.end());
}

void Trace::set_tokens(Sequence sequence, std::vector<std::vector<std::string>> tokens) {
  const auto which = static_cast<std::size_t>(sequence);
  tokens_[which] = std::move(tokens);
  has_tokens_[which] = true;
}

const std::vector<std::vector<std::string>>* Trace::tokens(Sequence sequence) const {
  const auto which = static_cast<std::size_t>(sequence);
  return has_tokens_[which] ? &tokens_[which] : nullptr;
}

const TraceEntry* Trace::find(const StepId& id) const {
  // From the newest: the walkthrough looks up the entry just recorded and its neighbours.
  for (auto e = entries_.rbegin(); e != entries_.rend(); ++e)
    if (e->id == id) return &*e;
  return nullptr;
}

}  // namespace attn
