#include "attn/trace.h"

#include "attn/numeric_check.h"

namespace attn {

Tensor Trace::as_recorded(const Tensor& tensor) const {
  if (!drop_batch_axis_ || tensor.rank() == 0 || tensor.axes[0] != "B" || tensor.shape[0] != 1) return tensor;
  Tensor out;
  out.shape.assign(tensor.shape.begin() + 1, tensor.shape.end());
  out.axes.assign(tensor.axes.begin() + 1, tensor.axes.end());
  out.data = tensor.data;
  return out;
}

Operand Trace::operand(const std::string& name, const Tensor& tensor) const {
  if (drop_batch_axis_ && tensor.rank() > 0 && tensor.axes[0] == "B" && tensor.shape[0] == 1)
    return Operand{name, Shape(tensor.shape.begin() + 1, tensor.shape.end()),
                   AxisNames(tensor.axes.begin() + 1, tensor.axes.end())};
  return Operand{name, tensor.shape, tensor.axes};
}

void Trace::record(const std::string& name, const Tensor& tensor, std::vector<Operand> operands) {
  entries_.push_back(TraceEntry{name, as_recorded(tensor), std::move(operands)});
  check_finite(name, entries_.back().tensor);  // NumericError: inf or NaN, named with its index as recorded
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
