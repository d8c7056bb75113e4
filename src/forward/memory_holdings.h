// What a real run would hold, told from the records of the same run on shapes alone
// (forward/run_memory.cpp): the trace's sink sees each step's result as the real run
// records it, and the trace's tape says when each block has finished.
#ifndef ATTN_FORWARD_MEMORY_HOLDINGS_H_
#define ATTN_FORWARD_MEMORY_HOLDINGS_H_

#include <bitset>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "attn/model.h"
#include "attn/run_memory.h"
#include "attn/trace.h"

namespace attn {

// What malloc hands out for a tensor (as heap_peak.cpp measures it: each block's usable
// size): its numbers (when `with_numbers`), its shape and its axes' names. Beside a tiny
// model's numbers the shape and the names are much of it (a 4x8 tensor: 256 bytes of
// numbers, 104 of shape and names).
long double tensor_heap_bytes(const Shape& shape, const AxisNames& axes, bool with_numbers = true);

class MemoryHoldings {
 public:
  // A run of `model` whose trace keeps `kept`; `shown`: its walkthrough is written;
  // `lens`: the program holds each layer's output for the logit lens.
  MemoryHoldings(const Model& model, RunPlan::Kept kept, bool shown, bool lens);

  // Counts `trace`'s records from now on (its sink; the trace itself keeps nothing).
  void watch(Trace& trace);
  // Bytes held beside the records from now on (an earlier run's probabilities, the KV cache).
  void hold(long double bytes) { held_ += bytes; }
  // A generation's run: the decoder keeps the last position's logits once the head has run.
  void keep_last_logits() { keeps_last_logits_ = true; }
  // Notes every record's shape, in order (what a dump of the run writes).
  void note_shapes() { notes_shapes_ = true; }

  // The most held at once, in bytes.
  long double peak() const { return peak_; }
  // What the trace keeps once the run is over, and the text the walkthrough has written (an
  // estimate, memory_holdings.cpp).
  long double kept() const { return kept_bytes_; }
  long double text() const { return text_; }
  // The run's result: its last record (the probabilities, with an output head).
  long double last() const { return last_; }
  // The bytes of one position's logits, (V,), in the last output.logits recorded.
  long double last_logits() const { return last_logits_; }
  // The most a block held at once: what a block's backward holds besides, about as much.
  long double largest_block() const { return largest_block_; }
  // The records' shapes, when noted.
  const std::vector<Shape>& shapes() const { return shapes_; }

 private:
  void record(const TraceRecord& r);
  void keep(const StepId& id, long double bytes);

  const Model& model_;
  RunPlan::Kept policy_;
  bool shown_, lens_;
  bool keeps_last_logits_ = false, notes_shapes_ = false;
  std::vector<Shape> shapes_;
  const Trace* trace_ = nullptr;
  std::size_t blocks_seen_ = 0;                       // tape entries: blocks finished
  StepId last_id_;                                    // the last record (the lens's layer)
  long double block_ = 0;                             // the running block's results so far
  std::deque<long double> results_;                   // the last two finished blocks' results, still read
  std::vector<std::pair<StepId, long double>> kept_;  // what the trace keeps
  std::optional<StepId> layer_;                       // the layer running, for a streamed trace
  std::bitset<2 * kStepKindCount> kinds_shown_;       // the kinds (and their gradients) shown so far
  long double held_ = 0, kept_bytes_ = 0, lens_held_ = 0, text_ = 0;
  long double last_ = 0, peak_ = 0, largest_block_ = 0, last_logits_ = 0;
};

}  // namespace attn

#endif  // ATTN_FORWARD_MEMORY_HOLDINGS_H_
