// How the backward pass reads and records, as forward/trace_scope.h does for the forward:
// each backward function is handed a GradScope that says where its steps sit. It reads the
// forward's values from the kept trace by their ids, records each gradient as the entry
// grad.<name> of the same id, and adds the weights' gradients into WeightGradients.
#ifndef ATTN_BACKWARD_GRAD_SCOPE_H_
#define ATTN_BACKWARD_GRAD_SCOPE_H_

#include <string>
#include <utility>
#include <vector>

#include "attn/model.h"
#include "attn/trace.h"
#include "backward/weight_gradients.h"
#include "forward/trace_scope.h"

namespace attn {

// An operand read transposed (Vᵀ, W_oᵀ): its last two axes swapped, "ᵀ" after its name.
inline Operand transposed_operand(Operand o) {
  const std::size_t r = o.shape.size();
  if (r >= 2) {
    std::swap(o.shape[r - 1], o.shape[r - 2]);
    std::swap(o.axes[r - 1], o.axes[r - 2]);
  }
  o.entry.reset();
  o.name += "ᵀ";
  return o;
}

class GradScope : public ScopePlace<GradScope> {
 public:
  // `ablation`: the run's ablated heads (RunInput::ablation), whose step the attention
  // blocks of this scope take back; nullptr for none.
  GradScope(Trace& trace, WeightGradients& weights, Sequence sequence, const Ablation* ablation = nullptr)
      : ScopePlace(sequence), trace_(&trace), weights_(&weights), ablation_(ablation) {}

  // The forward's tensor of an entry as the step computed it: with its B axis, which an
  // unbatched run records without. InternalError when the trace did not keep it.
  Tensor value(const StepId& forward) const;
  Tensor value(StepKind kind, int number = 0) const { return value(id(kind, number)); }

  // Records `gradient` as grad.<name of `forward`>, made from `operands`.
  void record(const StepId& forward, const Tensor& gradient, std::vector<Operand> operands = {}) const {
    trace_->record(gradient_of(forward), gradient, std::move(operands));
  }
  void record(StepKind kind, const Tensor& gradient, std::vector<Operand> operands = {}, int number = 0) const {
    record(id(kind, number), gradient, std::move(operands));
  }
  // The same for a gradient the caller is done with: the trace takes its numbers.
  void record(StepKind kind, Tensor&& gradient, std::vector<Operand> operands = {}, int number = 0) const {
    trace_->record(gradient_of(id(kind, number)), std::move(gradient), std::move(operands));
  }

  // A kept entry (forward or gradient) as the operand of a step, by its recorded shape:
  // the trace of attn grad keeps every forward entry, and the gradients unless told not to
  // (then a gradient operand has its name only).
  Operand kept(const StepId& id) const;
  Operand kept(StepKind kind, int number = 0) const { return kept(id(kind, number)); }
  Operand kept_gradient(StepKind kind, int number = 0) const { return kept(gradient_of(id(kind, number))); }
  static Operand weight(const std::string& name, const Tensor& w) { return Trace::weight(name, w.shape, w.axes); }

  // The weight `kind` of this scope's place (the block, or norm `number`).
  ParameterId weight_id(WeightKind kind, int number = 0) const {
    return ParameterId{kind, place_.stack, place_.layer, number ? Block::None : place_.block, number, -1};
  }
  WeightGradients& weights() const { return *weights_; }
  Trace& trace() const { return *trace_; }

  // The heads of this scope's self-attention block the forward ablated, and whether by their
  // mean, as TraceScope has them.
  std::vector<std::size_t> ablated_heads() const {
    const StepId& at = place_;
    if (!ablation_ || at.block == Block::CrossAttention || !at.in_layer()) return {};
    return ablation_->heads_of(at.stack, at.layer);
  }
  bool ablates_by_mean() const { return ablation_ && ablation_->mean; }

 private:
  Trace* trace_;
  WeightGradients* weights_;
  const Ablation* ablation_;
};

}  // namespace attn

#endif  // ATTN_BACKWARD_GRAD_SCOPE_H_
