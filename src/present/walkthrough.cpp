// The walkthrough: each trace entry printed by the printer of its kind, in order, on one
// Page; --steps and --layer parsed into the filter the Page applies.
#include "attn/walkthrough.h"
#include "attn/step_roles.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "attn/error.h"
#include "core/did_you_mean.h"
#include "forward/streamed_trace.h"
#include "present/induction_lesson.h"
#include "present/model_overview.h"
#include "present/page.h"
#include "present/print_limits.h"
#include "present/step_printers.h"
#include "present/tensor_views.h"
#include "present/terminal.h"
#include "present/terminal_page.h"

namespace attn {

namespace {

// The pages of the table of step kinds, in order, each with its summary: the forward's
// (`attn steps --kinds`), or attn grad's alone (which --steps accepts beside them).
std::vector<StepKindDescription> pages_of_rows(bool gradient) {
  std::vector<StepKindDescription> pages;
  for (std::size_t i = 0; i < kStepKindCount; ++i) {
    const StepKindRow& row = step_kind_rows()[i];
    if (*row.page_summary && (row.place == EntryPlace::Gradient) == gradient)
      pages.push_back({row.page, row.page_summary});
  }
  return pages;
}

const std::vector<StepKindDescription> kStepKinds = pages_of_rows(false);
const std::vector<StepKindDescription> kGradientKinds = pages_of_rows(true);

// The stage of the run an entry belongs to, for the map: the source's input steps, each
// layer, a stack's final norm, the target's input steps, the output head.
std::string stage_key(const StepId& id) {
  // attn grad: the loss, then the backward pass's stages (the same, walked in reverse)
  if (id.kind == StepKind::Loss) return "loss";
  if (id.kind == StepKind::Weight) return "backward.weights";
  if (id.gradient) {
    StepId forward = id;
    forward.gradient = false;
    return "backward." + stage_key(forward);
  }
  if (step_kind_row(id.kind).place == EntryPlace::Lens) return "lens";
  if (id.in_layer()) return layer_name(id);
  if (is_final_norm(id.kind)) return trace_name(id);
  if (in_output_head(id.kind)) return "output";
  if (id.kind == StepKind::Mask)
    return id.stack == Stack::Decoder && id.sequence == Sequence::Target ? "target" : "source";
  return id.sequence == Sequence::Target ? "target" : "source";
}

// What a stage does, in a few words.
std::string stage_text(const StepId& id, const Trace& trace, const Model& model) {
  const auto sentence = [&](Sequence sequence) {
    const auto* tokens = trace.tokens(sequence);
    if (!tokens || tokens->empty()) return std::string();
    // A long sentence is named by its first tokens (a map line, not the text again).
    constexpr std::size_t kShownTokens = 8;
    const auto& first = (*tokens)[0];
    const bool cut = first.size() > kShownTokens + 2;
    std::string text;
    for (std::size_t i = 0; i < (cut ? kShownTokens : first.size()); ++i)
      text += (text.empty() ? "" : " ") + readable_token(model, first[i]);
    if (cut) text += fmt::format(" …\" ({} tokens", first.size());
    return " \"" + text + (cut ? ")" : "\"") +
           (tokens->size() > 1 ? fmt::format(" and {} more", tokens->size() - 1) : "");
  };
  const std::string key = stage_key(id);
  if (key == "loss") return "the loss";
  if (key == "backward.weights") return "backward: the gradient of every weight";
  if (key == "backward.source")
    return trace.tokens(Sequence::Source) ? "backward: X -> positions, embeddings" : "backward: the input X";
  if (key == "backward.target") return "backward: Y -> positions, embeddings";
  if (id.gradient) {
    StepId forward = id;
    forward.gradient = false;
    return "backward: " + stage_text(forward, trace, model);
  }
  if (key == "source")
    return trace.tokens(Sequence::Source) ? "source" + sentence(Sequence::Source) + " -> tokens, embeddings -> X"
                                          : "the input X, as given";
  if (key == "target") return "target" + sentence(Sequence::Target) + " -> tokens, embeddings -> Y; masks";
  if (key == "output")
    return model.output.has_transform()
               ? std::string("output head: transform, its LayerNorm, logits, ") +
                     (model.output.fills_in ? "each position's probabilities" : "next-token probabilities")
               : "output head: logits, next-token probabilities";
  if (key == "lens") return "logit lens: the final norm and the output head after every layer";
  if (is_final_norm(id.kind))
    return fmt::format("final {} of the {} stack", root_mean_square(model.config.norm) ? "RMSNorm" : "LayerNorm",
                       is_decoder_only(model)       ? "decoder-only"
                       : id.stack == Stack::Decoder ? "decoder"
                                                    : "encoder");
  if (model.decoder_only()) return fmt::format("decoder-only layer {}: masked self-attention, feed-forward", id.layer);
  if (id.stack == Stack::Decoder)
    return fmt::format("decoder layer {}: masked self-, cross-attention, feed-forward", id.layer);
  if (!model.encoder[static_cast<std::size_t>(id.layer)].full)
    return fmt::format("{} layer {}: {}self-attention alone", model.config.causal ? "masked" : "encoder", id.layer,
                       model.config.causal ? "masked " : "");
  return fmt::format("{} layer {}: {}self-attention, feed-forward", is_decoder_only(model) ? "decoder-only" : "encoder",
                     id.layer, model.config.causal ? "masked " : "");
}

// Prints entries in trace order on its page, drawn by `renderer`; write() ends the page with
// the map of the run.
class Walkthrough {
 public:
  Walkthrough(const Trace& trace, const Model& model, const RunInput& input, const WalkthroughOptions& options,
              PageRenderer& renderer)
      : trace_(trace),
        model_(model),
        options_(options),
        renderer_(renderer),
        page_(renderer, model, options),
        context_{trace, model, input, options, page_} {}

  // The number of the last step printed or passed over so far.
  int last_step() const { return page_.step(); }

  void print(const TraceEntry& entry) {
    if (options_.overview) overview(entry);
    const StepPrinterInfo& printer = entry.id.gradient ? backward_printer_of(entry.id.kind) : printer_of(entry.id.kind);
    const int before = page_.step();
    if (printer.in_layer) page_.enter(entry.id);
    printer.print(entry, context_);
    for (const auto& w : context_.trace.warnings())
      if (w.id == entry.id) page_.note(w.message);
    if (page_.step() == before) return;
    if (options_.induction_lesson) lesson_.see(entry, trace_, page_.step());
    const std::string key = stage_key(entry.id);
    if (keys_.empty() || keys_.back() != key) {
      keys_.push_back(key);
      stages_.push_back({stage_text(entry.id, trace_, model_), before + 1, page_.step()});
    }
    stages_.back().last = page_.step();
  }

  // Ends the page: the map of the whole run, unless the learner picked steps already.
  void write() {
    if (options_.overview) {
      summarize_layer();
      write_heads_grid();
    }
    page_.flush_formula();
    const StepFilter& f = options_.filter;
    const bool picked = !f.ranges.empty() || !f.kinds.empty() || f.layer;
    if (options_.induction_lesson && !picked && !f.head && !options_.list_only)
      lesson_.write(page_, model_, *options_.induction_lesson);
    renderer_.finish(options_.map && !options_.list_only && !picked ? stages_ : std::vector<MapStage>());
  }

 private:
  const Trace& trace_;
  const Model& model_;
  const WalkthroughOptions& options_;
  PageRenderer& renderer_;
  Page page_;
  PrintContext context_;
  std::vector<std::string> keys_;  // stage_key of each stage
  std::vector<MapStage> stages_;
  // A big model's overview: its heads' scores, the summarized layer the walkthrough is in
  // and its first step, whether the grid of every layer's heads is written.
  ModelOverview overview_;
  InductionLessonView lesson_;  // attn explain --example induction
  std::optional<StepId> summarized_;
  int summarized_from_ = 0;
  bool grid_written_ = false;

  // Before `entry` is printed: its heads scored; the summary of a summarized layer it leaves;
  // once every layer has passed, the grid.
  void overview(const TraceEntry& entry) {
    overview_.see(entry, trace_, context_.cell_batch());
    const StepId& id = entry.id;
    if (summarized_ && !(id.in_layer() && id.stack == summarized_->stack && id.layer == summarized_->layer))
      summarize_layer();
    const std::size_t layers = model_.encoder.size() + model_.decoder.size();
    if (!id.in_layer() && overview_.blocks().size() >= layers && !id.gradient) write_heads_grid();
    if (id.in_layer() && !id.gradient && !summarized_ && id.layer > 0 && renderer_.compacts_repeats()) {
      summarized_ = id;
      summarized_from_ = page_.step() + 1;
    }
  }

  void summarize_layer() {
    if (!summarized_) return;
    const StepId layer = *summarized_;
    summarized_.reset();
    const BlockHeads* heads = overview_.self_attention(layer);
    const std::string option =
        model_.encoder.empty() || model_.decoder.empty()
            ? std::to_string(layer.layer)
            : fmt::format("{}.{}", layer.stack == Stack::Decoder ? "decoder" : "encoder", layer.layer);
    page_.layer_summary(layer, fmt::format("steps {}-{} (--layer {} shows them); {}", summarized_from_, page_.step(),
                                           option, heads ? heads_line(*heads) : "no self-attention"));
  }

  void write_heads_grid() {
    if (grid_written_ || overview_.blocks().empty()) return;
    grid_written_ = true;
    page_.aside("══ Every layer's heads at a glance ══", "", "");
    page_.aside_table(heads_grid_table(overview_.blocks(), model_, page_.width()));
    page_.aside_line(
        "Each head as its strongest role, measured from its weights (attn heads, docs/heads.md): "
        "P previous token, F first token, S self, D duplicate token, I induction (q+1), J induction "
        "(q+2). A capital letter: the head puts at least half its weight there; a small one: its "
        "largest score, under half (a mixed head); -: no score is defined.");
  }
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

WalkthroughOptions options_for_model(WalkthroughOptions options, const Model& model) {
  if (!is_big_model(model) || options.full) return options;
  if (options.array.threshold == ArrayFormatOptions().threshold) {
    options.array.threshold = std::min(options.array.threshold, options.wide_threshold);
    options.array.edge_items = kOverviewEdgeItems;
  }
  const StepFilter& f = options.filter;
  options.overview = f.ranges.empty() && f.kinds.empty() && !f.layer && !f.head && !options.list_only;
  return options;
}

void print_walkthrough(std::ostream& out, const Trace& trace, const Model& model, const RunInput& input,
                       const WalkthroughOptions& options, std::vector<StepPlace>* places) {
  for (const auto& e : trace.entries()) check_slice_options(e, options);
  TerminalPage page(out, options);
  Walkthrough walkthrough(trace, model, input, options, page);
  for (const auto& entry : trace.entries()) walkthrough.print(entry);
  check_step_numbers(options.filter, walkthrough.last_step());
  walkthrough.write();
  if (places) *places = page.places();
}

struct StreamingWalkthrough::State {
  State(const Trace& trace, const Model& model, const RunInput& input) : trace(trace), model(model), input(input) {}
  const Trace& trace;
  const Model& model;
  const RunInput& input;
  std::unique_ptr<TerminalPage> terminal;                  // none when only other pages are drawn
  std::vector<std::unique_ptr<Walkthrough>> walkthroughs;  // one per page, the terminal's first
  std::optional<StepId> pending;                           // the entry printed when the next one arrives
  std::optional<StepId> layer;                             // the layer of the newest entry
};

StreamingWalkthrough::StreamingWalkthrough(std::ostream& out, Trace& trace, const Model& model, const RunInput& input,
                                           const WalkthroughOptions& options, bool forget)
    : StreamingWalkthrough(trace, model, input, options, forget) {
  state_->terminal = std::make_unique<TerminalPage>(out, options);
  draw_also(*state_->terminal, options);
}

StreamingWalkthrough::StreamingWalkthrough(Trace& trace, const Model& model, const RunInput& input,
                                           const WalkthroughOptions& options, bool forget)
    : trace_(trace), options_(options), forget_(forget), state_(std::make_unique<State>(trace, model, input)) {
  // Every head has the model's H (the decoder's may differ: the larger counts): a bad --head
  // is refused before the first step prints. (--batch is checked on the first entry, which
  // has the B axis when there is one.)
  const std::size_t H = std::max(model.config.num_heads, model.config.decoder_config().num_heads);
  if (options.filter.head && *options.filter.head >= H) slice_index_error("--head", "H", H, *options.filter.head);
}

StreamingWalkthrough::~StreamingWalkthrough() = default;

void StreamingWalkthrough::draw_also(PageRenderer& renderer, const WalkthroughOptions& options) {
  state_->walkthroughs.push_back(
      std::make_unique<Walkthrough>(state_->trace, state_->model, state_->input, options, renderer));
}

void StreamingWalkthrough::add(const TraceEntry& entry) {
  check_slice_options(entry, options_);
  const StepId id = entry.id;  // `entry` may move once entries are forgotten
  print_pending();
  if (forget_ && starts_new_layer(id, state_->layer)) {
    // A new layer: the layers before it are not looked at again (forward/streamed_trace.h).
    const std::optional<StepId> finished = state_->layer;
    const int last_encoder_layer = static_cast<int>(state_->model.encoder.size()) - 1;
    const bool lens = state_->input.lens;  // the logit lens works from every layer's output
    trace_.forget_entries_if(
        [&](const TraceEntry& e) { return forgotten_at_new_layer(e.id, id, finished, last_encoder_layer, lens); });
  }
  if (id.in_layer()) state_->layer = id;
  state_->pending = id;
}

void StreamingWalkthrough::finish(bool complete) {
  print_pending();
  for (auto& walkthrough : state_->walkthroughs)
    if (complete) check_step_numbers(options_.filter, walkthrough->last_step());
  for (auto& walkthrough : state_->walkthroughs) walkthrough->write();
}

const std::vector<StepPlace>& StreamingWalkthrough::step_places() const {
  static const std::vector<StepPlace> kNone;
  return state_->terminal ? state_->terminal->places() : kNone;
}

void StreamingWalkthrough::print_pending() {
  if (!state_->pending) return;
  const TraceEntry* entry = trace_.find(*state_->pending);
  state_->pending.reset();
  if (!entry) return;
  for (auto& walkthrough : state_->walkthroughs) walkthrough->print(*entry);
}

}  // namespace attn
