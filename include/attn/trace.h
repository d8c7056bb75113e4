// The record of a forward pass: every intermediate tensor, in the order computed, under a
// stable name ("encoder.0.attention.scores"). Step functions compute; the forward pass
// records what they return here; printers and the JSON dump only read it.
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
  std::string name;     // the entry it concerns
  std::string message;
};

struct TraceEntry {
  std::string name;
  Tensor tensor;
  std::vector<Operand> operands;
};

class Trace {
 public:
  // Unbatched input (S, N) is computed as B = 1 and recorded without the B axis, so that
  // shapes print and dump as the learner wrote them (seeds 002-004).
  explicit Trace(bool drop_batch_axis = false) : drop_batch_axis_(drop_batch_axis) {}

  void record(const std::string& name, const Tensor& tensor, std::vector<Operand> operands = {});

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

  // How a recorded tensor appears (B axis dropped for unbatched runs).
  Tensor as_recorded(const Tensor& tensor) const;
  Operand operand(const std::string& name, const Tensor& tensor) const;

 private:
  bool drop_batch_axis_;
  std::vector<TraceEntry> entries_;
  std::vector<TraceWarning> warnings_;
  std::vector<std::pair<std::string, std::vector<std::vector<std::string>>>> tokens_;
};

}  // namespace attn

#endif  // ATTN_TRACE_H_
