#include "forward/memory_holdings.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "attn/step_roles.h"
#include "core/memory_budget.h"
#include "forward/streamed_trace.h"

namespace attn {

namespace {

// What the walkthrough's text takes while it is held: the page is written once the run is
// over (its map first), so its text is held whole, in pieces of a fixed size
// (present/held_text.h). The text written is estimated from the records' shapes, fitted to
// the examples' and the reference checkpoints' walkthroughs (explain, --lens, grad,
// generate): the first step of a kind is shown in full, 760 bytes of explanation and formula
// and 5.5 a number shown (a tensor shows at most 400 of its numbers: NumPy summarizes the
// rest); a later step of that kind 4.3 a number. That is 0.76 to 1.12 times the text a
// forward's walkthrough writes; twice the estimate held covers the text the lowest estimate
// misses, the piece in hand and the printers' own strings (gpt_tiny's and seed000's
// walkthroughs are the closest, at 1.01 and 1.02 times their heap).
constexpr long double kTextHeld = 2.0;
constexpr long double kTextFirstStep = 760, kTextFirstNumber = 5.5, kTextLaterNumber = 4.3;
constexpr long double kTextNumbersShown = 400;

long double elements(const Shape& shape) {
  long double n = 1;
  for (const std::size_t axis : shape) n *= static_cast<long double>(axis);
  return n;
}

// What malloc hands out for `bytes` (core/memory_budget.h).
long double block(long double bytes) { return heap_block_bytes(bytes); }

// What a kept entry holds besides its tensor: its place in the trace's vector (which holds
// up to twice its entries), its name, and its operands' names, shapes and axes.
long double entry_heap_bytes(const TraceRecord& r) {
  long double bytes = 2 * sizeof(TraceEntry) + string_heap_bytes(r.name) + block(sizeof(Operand) * r.operands.size());
  for (const Operand& operand : r.operands)
    bytes += string_heap_bytes(operand.name) + tensor_heap_bytes(operand.shape, operand.axes, false);
  return bytes;
}

}  // namespace

long double tensor_heap_bytes(const Shape& shape, const AxisNames& axes, bool with_numbers) {
  long double bytes = (with_numbers ? block(8 * elements(shape)) : 0) + block(sizeof(std::size_t) * shape.size()) +
                      block(sizeof(std::string) * axes.size());
  for (const std::string& axis : axes) bytes += string_heap_bytes(axis);
  return bytes;
}

MemoryHoldings::MemoryHoldings(const Model& model, RunPlan::Kept kept, bool shown, bool lens)
    : model_(model), policy_(kept), shown_(shown), lens_(lens) {}

void MemoryHoldings::watch(Trace& trace) {
  trace_ = &trace;
  blocks_seen_ = trace.tape().size();
  trace.keep_entries(false);
  trace.set_sink([this](const TraceRecord& r) { record(r); });
}

void MemoryHoldings::record(const TraceRecord& r) {
  const long double numbers = elements(r.shape), bytes = tensor_heap_bytes(r.shape, r.axes);
  // A block finished since the last record: its intermediates are freed; its result (the
  // last thing it recorded) is read by the blocks after it, as the layer's input and the
  // residual's.
  // (the logit lens adds nothing to the tape: each of its layers is a block of its own)
  const bool lens_layer = in_logit_lens(r.id.kind) && !(in_logit_lens(last_id_.kind) && last_id_.number == r.id.number);
  last_id_ = r.id;
  if (trace_->tape().size() != blocks_seen_ || lens_layer) {
    blocks_seen_ = trace_->tape().size();
    results_.push_back(last_);
    if (results_.size() > 2) results_.pop_front();
    block_ = 0;
  }
  block_ += bytes;
  largest_block_ = std::max(largest_block_, block_);
  last_ = bytes;
  keep(r.id, bytes + entry_heap_bytes(r));
  if (notes_shapes_) shapes_.push_back(r.shape);
  // the logit lens: the program holds every layer's output until the head reads them
  if (lens_ && is_layer_output(r.id.kind)) lens_held_ += bytes;
  if (shown_) {
    const long double shown = std::min(numbers, kTextNumbersShown);
    const std::size_t kind = static_cast<std::size_t>(r.id.kind) + (r.id.gradient ? kStepKindCount : 0);
    const bool first = !kinds_shown_[kind];
    kinds_shown_[kind] = true;
    text_ += (first ? kTextFirstStep + kTextFirstNumber * shown : kTextLaterNumber * shown);
  }
  // the generation's decoder keeps the last position's logits, (V,), from the head on
  if (is_output_logits(r.id.kind) && !r.shape.empty()) {
    last_logits_ = 8 * static_cast<long double>(r.shape.back());
    if (keeps_last_logits_) held_ += last_logits_;
  }
  // a walkthrough's printer reads the entry as it prints it, into a copy at most as large
  // (and the tape, one entry a block, in a vector that holds up to twice its entries)
  long double now = held_ + kept_bytes_ + lens_held_ + block_ + kTextHeld * text_ + (shown_ ? bytes : 0) +
                    2 * sizeof(TapeEntry) * static_cast<long double>(trace_->tape().size());
  for (const long double result : results_) now += result;
  peak_ = std::max(peak_, now);
}

void MemoryHoldings::keep(const StepId& id, long double bytes) {
  switch (policy_) {
    case RunPlan::Kept::Nothing:
      return;
    case RunPlan::Kept::AttentionWeights:
      if (!is_attention_pattern(id.kind) && !is_token_ids(id.kind)) return;
      break;
    case RunPlan::Kept::Streamed:
      if (starts_new_layer(id, layer_)) {
        const int last_encoder_layer = static_cast<int>(model_.encoder.size()) - 1;
        const auto forgotten = [&](const std::pair<StepId, long double>& e) {
          return forgotten_at_new_layer(e.first, id, layer_, last_encoder_layer, lens_);
        };
        for (const auto& e : kept_)
          if (forgotten(e)) kept_bytes_ -= e.second;
        kept_.erase(std::remove_if(kept_.begin(), kept_.end(), forgotten), kept_.end());
      }
      if (id.in_layer()) layer_ = id;
      break;
    case RunPlan::Kept::Everything:
      break;
  }
  kept_.emplace_back(id, bytes);
  kept_bytes_ += bytes;
}

}  // namespace attn
