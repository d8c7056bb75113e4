// The record of a forward pass: every intermediate tensor, in the order computed. Step
// functions compute; the forward pass records what they return here; printers and the
// dumps only read it.
//
// Each entry says what it is with a StepId: the kind of step that made it (an enum) and
// where in the model it sits (which sequence, stack, layer and block). Printers dispatch on
// the kind and find earlier entries by their ids. The documented name of each entry
// ("encoder.0.attention.scores", docs/trace-names.md) is made from its id in one place,
// forward/trace_names.cpp, for the dumps and for display.
//
// A trace keeps its entries for the walkthrough, which looks back at earlier steps of the
// same layer; the walkthrough prints as entries arrive and drops finished layers
// (forget_entries_if). A run that only dumps keeps nothing: a sink sees each record as it
// is made (the dump writes it out). Either way memory stays near one layer's tensors
// rather than the sum of every layer's.
#ifndef ATTN_TRACE_H_
#define ATTN_TRACE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attn/parameters.h"
#include "attn/tensor.h"

namespace attn {

// The step that made a tensor, one per row of the table of step kinds
// (attn/step_kinds.def), which says everything else about it: its trace name
// (docs/trace-names.md), its page, its explanation and its printers.
enum class StepKind : std::uint8_t {
#define ATTN_STEP(kind, ...) kind,
#include "attn/step_kinds.def"
#undef ATTN_STEP
};
constexpr std::size_t kStepKindCount = 0
#define ATTN_STEP(...) +1
#include "attn/step_kinds.def"
#undef ATTN_STEP
    ;

// Where the entries of a kind sit, which makes their names (step_kinds.def explains each).
enum class EntryPlace : std::uint8_t { Input, Mask, Layer, StackEnd, Model, Gradient, Lens };

// A row of the table of step kinds, as the forward pass and the walkthrough read it (the
// printers are present/'s: print_context.cpp reads them from the same rows).
struct StepKindRow {
  StepKind kind;
  const char* trace_name;    // "scores", "tokens.ids", "output.logits"
  const char* display_name;  // "scores", "Q"; "" when it depends on more than the kind
  const char* page;          // "masked_scores": --steps, `attn steps --kinds`, docs/steps/<page>.md
  const char* explanation;   // "causal_mask": the key of its text (present/explanations.def)
  EntryPlace place;
  const char* steps_alias;   // a name --steps takes besides the page ("q_heads"), or ""
  const char* page_summary;  // on the first row of a page: its line in `attn steps --kinds`
};
// The row of a kind.
const StepKindRow& step_kind_row(StepKind kind);
// Every row, in StepKind's order.
const StepKindRow* step_kind_rows();

// Which token sequence an entry belongs to: the source (the encoder's input) or the
// target (the decoder's).
// (Stack and Block, the stack and the part of a layer an entry belongs to, are
// attn/parameters.h's: weights sit in the same places.)
enum class Sequence : std::uint8_t { Source, Target };

// What a recorded tensor is and where it sits.
struct StepId {
  StepKind kind = StepKind::Input;
  Sequence sequence = Sequence::Source;  // the sequence whose positions are the rows (queries)
  Stack stack = Stack::None;
  int layer = -1;  // the layer's index in its stack; -1 outside the layers
  Block block = Block::None;
  int number = 0;  // residualN and normN: which sub-layer of the layer (1, 2, 3); the lens: its layer
  // attn grad: the entry is dL/d(the entry this id names without the flag), "grad.<name>".
  bool gradient = false;
  // For kind Weight: which weight of the place, and its head (per-head matrices; else -1).
  WeightKind weight = WeightKind::Embedding;
  int head = -1;

  bool in_layer() const { return layer >= 0; }
  bool operator==(const StepId& o) const {
    return kind == o.kind && sequence == o.sequence && stack == o.stack && layer == o.layer && block == o.block &&
           number == o.number && gradient == o.gradient && weight == o.weight && head == o.head;
  }
  bool operator!=(const StepId& o) const { return !(*this == o); }
};

// What a forward pass ran, block by block: the tape. The forward's blocks (forward/) add an
// entry as each one finishes, naming the trace entries it read and made; the backward pass
// (attn/backward.h) replays the tape last entry first, each block by its own backward, so a
// model's layout is written once, in its forward, and its backward follows from it.
struct AttentionWeights;
struct FeedForwardWeights;
struct NormWeights;
struct OutputWeights;

// The blocks a forward pass is made of, as the backward tells them apart.
enum class TapeOp : std::uint8_t {
  Input,          // a sequence's input X (`input`): given as numbers, or the embeddings (`from_tokens`)
  Attention,      // multi-head attention: queries from `x`, keys and values from `x2`, `mask` optional
  FeedForward,    // the position-wise feed-forward network of `x`
  Norm,           // LayerNorm or RMSNorm of `x`, recorded as the result's kind and number
  Residual,       // x + x2 (the sub-layer's result), recorded as residual `result.number`
  LayerOutput,    // a layer's result: the numbers of `x`, under the layer's own name
  Head,           // the output head of `x`: logits, then probabilities (the loss starts here)
  HeadTransform,  // the head's transform of `x` before its norm: act(x W_t + b_t) (BERT's MLM head)
};

struct TapeEntry {
  TapeEntry(TapeOp op, const StepId& result, const StepId& x, const StepId& x2 = StepId())
      : op(op), result(result), x(x), x2(x2) {}

  TapeOp op = TapeOp::Input;
  StepId result;  // the entry the block made last: what later blocks read
  StepId x, x2;   // what it read
  std::optional<StepId> mask;
  bool from_tokens = false;  // Input: made from token embeddings, whose weights learn too
  const AttentionWeights* attention = nullptr;
  const FeedForwardWeights* ffn = nullptr;
  const NormWeights* norm = nullptr;
  const OutputWeights* output = nullptr;  // HeadTransform
};

// A hook on one entry (TransformerLens's hook point, addressed by the entry's id, whose
// trace name is its documented address): called with the value its step computed, before
// it is recorded. It may read the value, or change it in place: the run records the changed
// value and goes on with it, so every later step sees the consequence (activation patching
// replaces a value with another run's).
using Hook = std::function<void(const StepId& id, Tensor& value)>;

// The id of an entry's gradient (the same id, flagged).
StepId gradient_of(StepId id);
// The id of a weight's gradient, and the weight a Weight entry is the gradient of.
StepId weight_gradient_id(const ParameterId& weight);
ParameterId parameter_of(const StepId& id);

// The documented trace name of an entry ("encoder.0.attention.scores"), with "grad." in
// front for a gradient ("grad.encoder.0.attention.scores", "grad.encoder.0.attention.W_q").
std::string trace_name(const StepId& id);
// A weight's path in the model file, dotted: "encoder.0.attention.heads.1.W_q",
// "decoder.0.norm3.beta", "encoder_norm.gamma", "embedding", "output.W".
std::string parameter_name(const ParameterId& weight);
// "encoder.3" for an entry of that layer, "" outside the layers.
std::string layer_name(const StepId& id);

// A layer as --layer names it: "1" (layer 1 of either stack), "encoder.1", "decoder.0".
struct LayerSelection {
  std::optional<Stack> stack;  // none: either stack
  int layer = 0;
  bool selects(const StepId& id) const { return id.in_layer() && id.layer == layer && (!stack || *stack == id.stack); }
};
// Parses a --layer value; nullopt when it is not one of those forms.
std::optional<LayerSelection> parse_layer_selection(const std::string& text);

// The kind of entry whose name ends in `suffix` ("scaled_scores", "weights", "q_heads"),
// as --steps accepts them; nullopt when no entry is named so.
std::optional<StepKind> step_kind_of_suffix(const std::string& suffix);

// An operand of the product or operation that made a tensor, kept as shape only so the
// printer can write the shape equation even when the operand itself was not kept.
struct Operand {
  std::optional<StepId> entry;  // the trace entry it is, or none for a weight
  std::string name;             // its trace name, or the weight's name ("W_q")
  Shape shape;
  AxisNames axes;
};

// Something the learner should know about a recorded tensor (a fully masked row, say).
struct TraceWarning {
  StepId id;         // the entry it concerns
  std::string name;  // that entry's trace name
  std::string message;
};

// One recorded tensor as a sink sees it, borrowed from the forward pass without a copy:
// valid only while the sink runs.
struct TraceRecord {
  const StepId& id;
  const std::string& name;
  const Shape& shape;  // as recorded: without the B axis in unbatched runs
  const AxisNames& axes;
  const double* data;  // element_count(shape) values, C order
  const std::vector<Operand>& operands;
};

struct TraceEntry {
  StepId id;
  std::string name;
  Tensor tensor;
  std::vector<Operand> operands;

  TraceRecord record() const { return TraceRecord{id, name, tensor.shape, tensor.axes, tensor.data.data(), operands}; }
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
  // Whether a recorded value is read by no one after record() checks it: no entries kept,
  // no sink. (A hook reads the value of its own step before it is recorded.)
  bool discards_values() const { return !keep_entries_ && !sink_; }
  // Whether the kept entries include gradients (attn grad's; the default). Off, the
  // backward pass still reads every forward entry, while its gradients go to the sink only:
  // a run that neither prints nor keeps a dump in memory writes each once, and reuses its
  // memory.
  void keep_gradients(bool keep) { keep_gradients_ = keep; }

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
  void record(const StepId& id, const Tensor& tensor, std::vector<Operand> operands = {}, Check check = Check::Values);
  // The same for a tensor the caller no longer needs: a kept entry takes its numbers
  // without a copy (the backward's weight gradients, 150 MB at the base preset's size).
  void record(const StepId& id, Tensor&& tensor, std::vector<Operand> operands = {}, Check check = Check::Values);

  void warn(const StepId& id, const std::string& message) { warnings_.push_back({id, trace_name(id), message}); }

  // Token strings of a sequence, (B,S) with "<PAD>" where padded, for labels in the
  // walkthrough and the dump.
  void set_tokens(Sequence sequence, std::vector<std::vector<std::string>> tokens);
  const std::vector<std::vector<std::string>>* tokens(Sequence sequence) const;

  const std::vector<TraceEntry>& entries() const { return entries_; }
  // The kept entries, moved out (the trace is left empty): attn train takes the weights'
  // gradients without a copy.
  std::vector<TraceEntry> take_entries() {
    std::vector<TraceEntry> out;
    out.swap(entries_);
    return out;
  }
  const std::vector<TraceWarning>& warnings() const { return warnings_; }
  // The kept entry with this id, or nullptr.
  const TraceEntry* find(const StepId& id) const;
  bool drops_batch_axis() const { return drop_batch_axis_; }

  // The tape: what the forward pass ran, block by block (TapeEntry), for the backward.
  void add_to_tape(TapeEntry entry) { tape_.push_back(std::move(entry)); }
  const std::vector<TapeEntry>& tape() const { return tape_; }

  // Hooks: `hook` runs on every entry recorded with this id (TraceScope::record runs them).
  void add_hook(const StepId& id, Hook hook) { hooks_.push_back({id, std::move(hook)}); }
  bool has_hooks() const { return !hooks_.empty(); }
  bool has_hook(const StepId& id) const {
    for (const auto& hook : hooks_)
      if (hook.first == id) return true;
    return false;
  }
  // Runs the hooks of `id` on `value`, in the order they were added.
  void run_hooks(const StepId& id, Tensor& value) const {
    for (const auto& [at, hook] : hooks_)
      if (at == id) hook(id, value);
  }

  // The operand that a recorded entry is to a later step (B axis dropped for unbatched
  // runs, as the entry itself).
  Operand operand(const StepId& id, const Tensor& tensor) const;
  // A weight as an operand: its name as the walkthrough writes it ("W_q") and its shape.
  static Operand weight(const std::string& name, const Shape& shape, const AxisNames& axes);

 private:
  // Checks and passes a record to the sink; returns whether the entry is to be kept.
  bool record_shared(const StepId& id, const Tensor& tensor, const std::vector<Operand>& operands, Check check);
  // Stores an entry whose numbers are set, with the shape `computed` has, as recorded.
  void keep(TraceEntry entry, const Tensor& computed);

  bool drop_batch_axis_;
  bool keep_entries_ = true;
  bool keep_gradients_ = true;
  Sink sink_;
  EntryObserver entry_observer_;
  std::vector<TraceEntry> entries_;
  std::vector<TraceWarning> warnings_;
  std::vector<TapeEntry> tape_;
  std::vector<std::pair<StepId, Hook>> hooks_;
  std::vector<std::vector<std::string>> tokens_[2];
  bool has_tokens_[2] = {false, false};
};

}  // namespace attn

#endif  // ATTN_TRACE_H_
