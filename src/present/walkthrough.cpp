// The walkthrough: each trace entry printed by the printer of its kind, in order, on one
// Page; --steps and --layer parsed into the filter the Page applies.
#include "attn/walkthrough.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "attn/error.h"
#include "core/did_you_mean.h"
#include "present/page.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"

namespace attn {

namespace {

// Every kind of step the walkthrough prints, in order: the names --steps accepts.
const std::vector<StepKindDescription> kStepKinds = {
    {"tokens", "text split into tokens, each looked up to its id"},
    {"padding_mask", "which positions of a batch are <PAD>"},
    {"embedding", "embedding lookup E[ids]"},
    {"scale_embedding", "embeddings times sqrt(d_model)"},
    {"positions", "the positional encoding added to the embeddings"},
    {"input", "the encoder's (or decoder's) input"},
    {"mask", "causal and padding masks, boolean and additive"},
    {"q", "query projection Q = X W_q"},
    {"k", "key projection K = X W_k"},
    {"v", "value projection V = X W_v"},
    {"split_heads", "(B,S,H*d) -> (B,S,H,d) -> (B,H,S,d)"},
    {"transpose_k", "K transposed to (B,H,d,S)"},
    {"scores", "raw scores Q K^T"},
    {"scale", "scores / sqrt(d)"},
    {"masked_scores", "scores + mask"},
    {"softmax", "attention weights, rows summing to 1"},
    {"context", "weights V"},
    {"merge_heads", "(B,H,S,d) -> (B,S,H,d) -> (B,S,H*d)"},
    {"output_projection", "concat W_o"},
    {"residual", "x + sublayer(x)"},
    {"norm", "layer normalization"},
    {"ffn", "the position-wise feed-forward network"},
    {"layer_output", "a layer's result"},
    {"logits", "scores for every vocabulary token"},
    {"probabilities", "softmax over the vocabulary, top 5, greedy pick"},
};

// Prints entries in trace order. After the learner quits (--pause, q) nothing more prints.
class Walkthrough {
 public:
  Walkthrough(std::ostream& out, const Trace& trace, const Model& model, const WalkthroughOptions& options)
      : out_(out), page_(out, model, options), context_{trace, model, options, page_} {}

  // The number of the last step printed or passed over so far.
  int last_step() const { return page_.step(); }
  bool stopped() const { return stopped_; }

  void print(const TraceEntry& entry) {
    if (stopped_) return;
    try {
      const StepPrinterInfo& printer =
          entry.id.gradient ? backward_printer_of(entry.id.kind) : printer_of(entry.id.kind);
      if (printer.in_layer) page_.enter(entry.id);
      printer.print(entry, context_);
      for (const auto& w : context_.trace.warnings())
        if (w.id == entry.id) page_.note(w.message);
    } catch (const StopWalkthrough&) {
      stopped_ = true;
      out_ << "\n(stopped at step " << page_.step() << ")\n";
    }
  }

 private:
  std::ostream& out_;
  Page page_;
  PrintContext context_;
  bool stopped_ = false;
};

// An index given to --batch or --head that the entry's B or H axis does not have: an
// InputError, raised before anything of the walkthrough is printed.
void check_slice_option(const TraceEntry& entry, const std::optional<std::size_t>& index, const std::string& axis,
                        const char* option) {
  if (!index) return;
  const std::size_t a = axis_of(entry.tensor, axis);
  if (a < entry.tensor.rank() && *index >= entry.tensor.shape[a])
    slice_index_error(option, axis, entry.tensor.shape[a], *index);
}

void check_slice_options(const TraceEntry& entry, const WalkthroughOptions& options) {
  check_slice_option(entry, options.filter.batch, "B", "--batch");
  check_slice_option(entry, options.filter.head, "H", "--head");
}

}  // namespace

bool StepFilter::selects(int number, const std::string& kind, const StepId* layer_of_step) const {
  if (layer && (!layer_of_step || !layer->selects(*layer_of_step))) return false;
  if (ranges.empty() && kinds.empty()) return true;
  for (const auto& [from, to] : ranges)
    if (number >= from && number <= to) return true;
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

const std::vector<StepKindDescription>& step_kinds() { return kStepKinds; }

namespace {

// The kinds only attn grad's walkthrough has, which --steps accepts beside step_kinds()
// (whose list `attn steps --kinds` prints: the forward's).
const std::vector<StepKindDescription> kGradientKinds = {
    {"loss", "the loss: cross-entropy of the labels, or sum(output * output_grad)"},
    {"weight_gradients", "the gradient of every weight"},
};

}  // namespace

namespace {

// A step number of --steps: digits only, at least 1, at most kMaxStepNumber (far beyond
// any run, and no overflow: "4294967297" must not wrap around to step 1).
constexpr int kMaxStepNumber = 1000000;
std::optional<int> step_number(const std::string& text) {
  if (text.empty() || text.size() > 7 || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const int n = std::stoi(text);
  if (n < 1 || n > kMaxStepNumber) return std::nullopt;
  return n;
}

std::string trimmed(std::string text) {
  text.erase(0, text.find_first_not_of(' '));
  text.erase(text.find_last_not_of(' ') + 1);
  return text;
}

}  // namespace

StepFilter parse_step_selection(const std::string& text) {
  StepFilter filter;
  std::vector<std::string> names;
  for (const auto& k : kStepKinds) names.emplace_back(k.name);
  for (const auto& k : kGradientKinds) names.emplace_back(k.name);
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) {
    part = trimmed(part);
    if (part.empty()) continue;
    const std::size_t dash = part.find('-');
    const auto from = step_number(trimmed(part.substr(0, dash)));
    const auto to = dash == std::string::npos ? from : step_number(trimmed(part.substr(dash + 1)));
    if (from && to && *to >= *from) {
      filter.ranges.emplace_back(*from, *to);
    } else if (std::find(names.begin(), names.end(), part) != names.end()) {
      filter.kinds.push_back(part);
    } else if (const auto kind = step_kind_of_suffix(part)) {
      filter.kinds.emplace_back(printer_of(*kind).shown_kind);
    } else {
      const std::string suggestion = did_you_mean(part, names);
      throw InputError(
          "--steps", "",
          fmt::format("expected step numbers (5), ranges (5-9) or step kinds (scores, softmax; "
                      "'attn steps' lists them), found \"{}\"{}",
                      printable(part), suggestion.empty() ? "" : " (did you mean \"" + suggestion + "\"?)"));
    }
  }
  return filter;
}

void check_step_numbers(const StepFilter& filter, int last_step) {
  for (const auto& [from, to] : filter.ranges)
    if (to > last_step)
      throw InputError("--steps", "",
                       fmt::format("expected step numbers from 1 to {} (the steps of this run; 'attn steps' lists "
                                   "them), found {}",
                                   last_step, from > last_step ? from : to));
}

void parse_layer_option(const std::string& text, StepFilter& filter) {
  if (text.empty()) return;
  filter.layer = parse_layer_selection(text);
  if (!filter.layer)
    throw InputError("--layer", "",
                     fmt::format("expected a layer: its number (1), or its stack and number (encoder.1, decoder.0), "
                                 "found \"{}\"",
                                 printable(text)));
}

void print_walkthrough(std::ostream& out, const Trace& trace, const Model& model, const WalkthroughOptions& options) {
  for (const auto& e : trace.entries()) check_slice_options(e, options);
  Walkthrough walkthrough(out, trace, model, options);
  for (const auto& entry : trace.entries()) walkthrough.print(entry);
  if (!walkthrough.stopped()) check_step_numbers(options.filter, walkthrough.last_step());
}

struct StreamingWalkthrough::State {
  State(std::ostream& out, const Trace& trace, const Model& model, const WalkthroughOptions& options)
      : walkthrough(out, trace, model, options) {}
  Walkthrough walkthrough;
  std::optional<StepId> pending;  // the entry printed when the next one arrives
  std::optional<StepId> layer;    // the layer of the newest entry
  std::size_t encoder_layers = 0;
};

StreamingWalkthrough::StreamingWalkthrough(std::ostream& out, Trace& trace, const Model& model,
                                           const WalkthroughOptions& options, bool forget)
    : trace_(trace), options_(options), forget_(forget), state_(std::make_unique<State>(out, trace, model, options)) {
  state_->encoder_layers = model.encoder.size();
  // Every head has the model's H: a bad --head is refused before the first step prints.
  // (--batch is checked on the first entry, which has the B axis when there is one.)
  if (options.filter.head && *options.filter.head >= model.config.num_heads)
    slice_index_error("--head", "H", model.config.num_heads, *options.filter.head);
}

StreamingWalkthrough::~StreamingWalkthrough() = default;

namespace {

bool same_layer(const StepId& a, const StepId& b) { return a.stack == b.stack && a.layer == b.layer; }

// Entries a later layer reads: a layer's outputs (B,S,N), which the next layer's first
// steps and the decoder's cross-attention take as input.
bool is_layer_result(const StepId& id) {
  return id.kind == StepKind::LayerOutput || id.kind == StepKind::OutputProjection || id.kind == StepKind::FfnOutput ||
         id.kind == StepKind::MergedHeads;
}

}  // namespace

void StreamingWalkthrough::add(const TraceEntry& entry) {
  check_slice_options(entry, options_);
  const StepId id = entry.id;  // `entry` may move once entries are forgotten
  print_pending();
  if (forget_ && id.in_layer() && (!state_->layer || !same_layer(*state_->layer, id))) {
    // A new layer: the layers before it are not looked at again, except the results of
    // the one just finished (the new layer's input) and of the encoder's last layer (the
    // decoder's memory). Entries outside the layers (tokens, masks, input) stay. So the
    // trace holds about two layers, however deep the model.
    const std::optional<StepId> finished = state_->layer;
    const int last_encoder_layer = static_cast<int>(state_->encoder_layers) - 1;
    trace_.forget_entries_if([&](const TraceEntry& e) {
      if (!e.id.in_layer() || same_layer(e.id, id)) return false;
      const bool kept_result = (finished && same_layer(e.id, *finished)) ||
                               (e.id.stack == Stack::Encoder && e.id.layer == last_encoder_layer);
      return !(kept_result && is_layer_result(e.id));
    });
  }
  if (id.in_layer()) state_->layer = id;
  state_->pending = id;
}

void StreamingWalkthrough::finish() {
  print_pending();
  if (!state_->walkthrough.stopped()) check_step_numbers(options_.filter, state_->walkthrough.last_step());
}

void StreamingWalkthrough::print_pending() {
  if (!state_->pending) return;
  const TraceEntry* entry = trace_.find(*state_->pending);
  state_->pending.reset();
  if (entry) state_->walkthrough.print(*entry);
}

}  // namespace attn
