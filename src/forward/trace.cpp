#include "attn/trace.h"

#include <algorithm>

#include "core/numeric_check.h"

namespace attn {

Operand Trace::operand(const std::string& name, const Tensor& tensor) const {
  if (drop_batch_axis_ && tensor.rank() > 0 && tensor.axes[0] == "B" && tensor.shape[0] == 1)
    return Operand{name, Shape(tensor.shape.begin() + 1, tensor.shape.end()),
                   AxisNames(tensor.axes.begin() + 1, tensor.axes.end())};
  return Operand{name, tensor.shape, tensor.axes};
}

void Trace::record(const std::string& name, const Tensor& tensor, std::vector<Operand> operands, Check check) {
  // The shape as recorded; the data is the same either way (dropping a size-1 axis).
  Operand recorded = operand(name, tensor);
  // NumericError: inf or NaN, named with its index as recorded. Checked even when nothing
  // keeps the tensor: a run must not succeed quietly on numbers that overflowed.
  if (check == Check::Values) check_finite(name, recorded.shape, tensor.data.data());
  if (!sink_ && !keep_entries_) return;
  if (sink_) sink_(TraceRecord{name, recorded.shape, recorded.axes, tensor.data.data(), operands});
  if (!keep_entries_) return;
  TraceEntry entry{name, Tensor(), std::move(operands)};
  entry.tensor.shape = std::move(recorded.shape);
  entry.tensor.axes = std::move(recorded.axes);
  entry.tensor.data = tensor.data;
  entries_.push_back(std::move(entry));
  if (entry_observer_) entry_observer_(entries_.back());
}

void Trace::forget_entries_if(const std::function<bool(const TraceEntry&)>& drop) {
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(), drop), entries_.end());
}

void Trace::set_tokens(const std::string& which, std::vector<std::vector<std::string>> tokens) {
  for (auto& [name, value] : tokens_)
    if (name == which) {
      value = std::move(tokens);
      return;
    }
  tokens_.emplace_back(which, std::move(tokens));
}

const std::vector<std::vector<std::string>>* Trace::tokens(const std::string& which) const {
  for (const auto& [name, value] : tokens_)
    if (name == which) return &value;
  return nullptr;
}

const TraceEntry* Trace::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

}  // namespace attn
