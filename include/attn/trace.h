// The record of a forward pass: every intermediate tensor, in the order computed, under a
// stable name ("encoder.0.attention.scores"). Step functions compute; the forward pass
// records what they return here; printers and the dumps only read it.
//
// A trace keeps its entries for the walkthrough, which looks back at earlier steps of the
// same layer; the walkthrough prints as entries arrive and drops finished layers
// (forget_entries_if). A run that only dumps keeps nothing: a sink sees each record as it
// is made (the dump writes it out). Either way memory stays near one layer's tensors
// rather than the sum of every layer's.
#ifndef ATTN_TRACE_H_
#define ATTN_TRACE_H_

#include <functional>
#include <string>
#include <vector>

#include "attn/tensor.h"

namespace attn {

// An operand of the product or operation that made a tensor, kept as shape only so the
// printer can write the shape equation even when the operand itself was not kept.
struct Operand {
  std::string name;  // trace name or a weight name ("W_q")
  Shape shape;
  AxisNames axes;
};

// Something the learner should know about a recorded tensor (a fully masked row, say).
struct TraceWarning {
  std::string name;  // the entry it concerns
  std::string message;
};

// One recorded tensor as a sink sees it, borrowed from the forward pass without a copy:
// valid only while the sink runs.
struct TraceRecord {
  const std::string& name;
  const Shape& shape;  // as recorded: without the B axis in unbatched runs
  const AxisNames& axes;
  const double* data;  // element_count(shape) values, C order
  const std::vector<Operand>& operands;
};

struct TraceEntry {
  std::string name;
  Tensor tensor;
  std::vector<Operand> operands;

  TraceRecord record() const { return TraceRecord{name, tensor.shape, tensor.axes, tensor.data.data(), operands}; }
};

class Trace {
 public:
  // Unbatched input (S, N) is computed as B = 1 and recorded without the B axis, so that
  // shapes print and dump as the learner wrote them (seeds 002-004).
  explicit Trace(bool drop_batch_axis = false) : drop_batch_axis_(drop_batch_axis) {}

  // Called with every record, in order, as the forward pass makes it.
  using Sink = std::function<void(const TraceRecord&)>;
  void set_sink(Sink sink) { sink_ = std::move(sink); }
  // Whether entries() keeps a copy of every tensor (the default). Off, the trace holds no
  // tensors: the sink is the only one to see them.
  void keep_entries(bool keep) { keep_entries_ = keep; }
  bool keeps_entries() const { return keep_entries_; }

  // Called with every kept entry right after it is stored (after the sink): the
  // walkthrough prints while the model runs.
  using EntryObserver = std::function<void(const TraceEntry&)>;
  void set_entry_observer(EntryObserver observer) { entry_observer_ = std::move(observer); }
  // Removes the kept entries for which `drop` is true: those a streaming walkthrough will
  // not look at again, so that its memory stays near one layer's tensors.
  void forget_entries_if(const std::function<bool(const TraceEntry&)>& drop);

  // Whether record() reads the tensor for inf and NaN. Every value is checked once: a step
  // that only moves numbers (splitting and merging heads, transposing) or cannot leave the
  // finite range when its inputs are in it (dividing by √d >= 1, softmax) is recorded with
  // InputsChecked, which skips a pass over memory as large as the tensor.
  enum class Check { Values, InputsChecked };
  void record(const std::string& name, const Tensor& tensor, std::vector<Operand> operands = {},
              Check check = Check::Values);

  void warn(const std::string& name, const std::string& message) { warnings_.push_back({name, message}); }

  // Token strings of a sequence ("source" or "target"), (B,S) with "<PAD>" where padded,
  // for labels in the walkthrough and the dump.
  void set_tokens(const std::string& which, std::vector<std::vector<std::string>> tokens);
  const std::vector<std::vector<std::string>>* tokens(const std::string& which) const;

  const std::vector<TraceEntry>& entries() const { return entries_; }
  const std::vector<TraceWarning>& warnings() const { return warnings_; }
  // The entry named `name`, or nullptr.
  const TraceEntry* find(const std::string& name) const;
  bool drops_batch_axis() const { return drop_batch_axis_; }

  // An operand's shape as it appears in the trace (B axis dropped for unbatched runs).
  Operand operand(const std::string& name, const Tensor& tensor) const;

 private:
  bool drop_batch_axis_;
  bool keep_entries_ = true;
  Sink sink_;
  EntryObserver entry_observer_;
  std::vector<TraceEntry> entries_;
  std::vector<TraceWarning> warnings_;
  std::vector<std::pair<std::string, std::vector<std::vector<std::string>>>> tokens_;
};

}  // namespace attn

#endif  // ATTN_TRACE_H_
