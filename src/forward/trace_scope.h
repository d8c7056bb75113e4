// How the forward pass records: each layer function is handed a TraceScope that says where
// its steps sit (sequence, stack, layer, block), instead of trace-name prefixes passed down
// every call. A step's result comes back as a Traced: the tensor and the id it was recorded
// under, so that a later step can name it as its operand.
#ifndef ATTN_FORWARD_TRACE_SCOPE_H_
#define ATTN_FORWARD_TRACE_SCOPE_H_

#include <string>
#include <utility>
#include <vector>

#include "attn/run_input.h"
#include "attn/tensor.h"
#include "attn/trace.h"
#include "core/numeric_check.h"

namespace attn {

// A tensor of the forward pass and the trace entry it was recorded as.
struct Traced {
  Tensor value;
  StepId id;
};

// Where a scope's steps sit (sequence, stack, layer, block): the part the forward's
// TraceScope and the backward's GradScope (backward/grad_scope.h) share. Scope is the
// derived class, which layer() and block() return.
template <typename Scope>
class ScopePlace {
 public:
  // The scope of layer `index` of `stack`, or of the stack itself (masks, final norm) when
  // index is -1.
  Scope layer(Stack stack, int index = -1) const {
    Scope s = static_cast<const Scope&>(*this);
    place_of(s).stack = stack;
    place_of(s).layer = index;
    return s;
  }
  Scope block(Block block) const {
    Scope s = static_cast<const Scope&>(*this);
    place_of(s).block = block;
    return s;
  }

  StepId id(StepKind kind, int number = 0) const {
    StepId id = place_;
    id.kind = kind;
    id.number = number;
    return id;
  }

 protected:
  explicit ScopePlace(Sequence sequence) { place_.sequence = sequence; }
  StepId place_;

 private:
  static StepId& place_of(ScopePlace& s) { return s.place_; }
};

class TraceScope : public ScopePlace<TraceScope> {
 public:
  // `ablation`: the run's ablated heads (RunInput::ablation), which the attention blocks of
  // this scope apply; nullptr for none.
  TraceScope(Trace& trace, Sequence sequence, const Ablation* ablation = nullptr)
      : ScopePlace(sequence), trace_(&trace), ablation_(ablation) {}

  // Records `value` as step `kind` of this scope, made from `operands`.
  Traced record(StepKind kind, Tensor value, std::vector<Operand> operands = {},
                Trace::Check check = Trace::Check::Values, int number = 0) const {
    Traced traced{std::move(value), id(kind, number)};
    trace_->record(traced.id, traced.value, std::move(operands), check);
    return traced;
  }

  // compute(), the step `kind` of this scope whose result has `input`'s shape (a norm),
  // recorded as record() does; a value it computes once per row that is not finite
  // (RowValueNotFinite) is named as the entry would be: "decoder.0.norm1[1, :]: ...".
  template <typename Compute>
  Traced record_rows(StepKind kind, const Traced& input, Compute compute, int number = 0) const {
    Tensor value;
    try {
      value = compute();
    } catch (const RowValueNotFinite& e) {
      const Operand entry = trace_->operand(id(kind, number), input.value);
      throw NumericError(e.where(entry.name, entry.shape));
    }
    return record(kind, std::move(value), {operand(input)}, Trace::Check::Values, number);
  }

  // A recorded tensor as the operand of a later step.
  Operand operand(const Traced& t) const { return trace_->operand(t.id, t.value); }
  // A weight as an operand, named as the walkthrough writes it ("W_q").
  static Operand weight(const std::string& name, const Tensor& w) { return Trace::weight(name, w.shape, w.axes); }

  Trace& trace() const { return *trace_; }

  // The heads of this scope's self-attention block that the run ablates (none in
  // cross-attention), and whether by their mean; empty without an ablation.
  std::vector<std::size_t> ablated_heads() const {
    const StepId at = id(StepKind::Context);
    if (!ablation_ || at.block == Block::CrossAttention || !at.in_layer()) return {};
    return ablation_->heads_of(at.stack, at.layer);
  }
  bool ablates_by_mean() const { return ablation_ && ablation_->mean; }

 private:
  Trace* trace_;
  const Ablation* ablation_;
};

}  // namespace attn

#endif  // ATTN_FORWARD_TRACE_SCOPE_H_
