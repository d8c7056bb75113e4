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
#include "forward/run_context.h"

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

  // The sequence (source or target) its steps run over.
  Sequence sequence() const { return place_.sequence; }

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
  // `context`: what the run reads besides the model (the ablated heads, the KV cache);
  // nullptr for nothing.
  TraceScope(Trace& trace, Sequence sequence, const RunContext* context = nullptr)
      : ScopePlace(sequence), trace_(&trace), context_(context) {}

  // Records `value` as step `kind` of this scope, made from `operands`.
  Traced record(StepKind kind, Tensor value, std::vector<Operand> operands = {},
                Trace::Check check = Trace::Check::Values, int number = 0) const {
    Traced traced{std::move(value), id(kind, number)};
    if (trace_->has_hooks()) trace_->run_hooks(traced.id, traced.value);
    trace_->record(traced.id, traced.value, std::move(operands), check);
    return traced;
  }

  // Adds what a block ran to the tape (attn/trace.h), for the backward pass.
  void tape(TapeEntry entry) const { trace_->add_to_tape(std::move(entry)); }
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
    const StepId& at = place_;
    const Ablation* ablation = context_ ? context_->ablation : nullptr;
    if (!ablation || at.block == Block::CrossAttention || !at.in_layer()) return {};
    return ablation->heads_of(at.stack, at.layer);
  }
  bool ablates_by_mean() const { return context_ && context_->ablation && context_->ablation->mean; }

  // The KV cache of this scope's decoder layer in a run that has one, else nullptr.
  LayerCache* cache() const {
    if (!context_ || !context_->cache || place_.stack != Stack::Decoder || place_.layer < 0) return nullptr;
    return &context_->cache->at(static_cast<std::size_t>(place_.layer));
  }
  // Whether the run is a cached step: one new row at position(), the rest from the cache.
  bool cached_step() const { return context_ && context_->step; }
  std::size_t position() const { return context_ ? context_->position : 0; }
  const RunContext* context() const { return context_; }

 private:
  Trace* trace_;
  const RunContext* context_;
};

}  // namespace attn

#endif  // ATTN_FORWARD_TRACE_SCOPE_H_
