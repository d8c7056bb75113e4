// The terminal walkthrough: reads a finished trace (and the model, for its weights and
// vocabulary, and the run's input) and prints each step in order: a numbered title, the formula, the shape
// equation with named axes on both sides, a short "why", the tensor printed the way NumPy
// prints it with a stats line, and for the steps a learner checks by hand one element
// worked out in full, labeled tables and attention heatmaps.
#ifndef ATTN_WALKTHROUGH_H_
#define ATTN_WALKTHROUGH_H_

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "attn/induction_lesson.h"
#include "attn/model.h"
#include "attn/run_input.h"
#include "attn/trace.h"

namespace attn {

// How tensors are printed (present/array_format.h): NumPy's print options, with the
// lesson's defaults.
struct ArrayFormatOptions {
  int precision = 4;             // at most this many digits after the point
  bool suppress_small = true;    // never scientific unless a value reaches 1e8
  std::size_t threshold = 1000;  // summarize arrays with more elements than this
  std::size_t edge_items = 3;    // elements kept at each edge of a summarized axis
  std::size_t line_width = 75;   // wrap rows longer than this
  bool integers = false;         // print as integers (token ids)
};

// How many colours the terminal understands.
enum class ColorDepth {
  Basic,      // the 16 standard ANSI colours
  Color256,   // xterm's 256-colour palette (ESC[48;5;Nm)
  TrueColor,  // 24-bit RGB (ESC[48;2;R;G;Bm)
};

// How attention heatmap cells are drawn: Unicode shading, plain ASCII characters, or
// coloured backgrounds.
enum class HeatmapStyle { Shade, Ascii, Color };

// Which steps to show: numbers and ranges ("5-9"), step kinds ("scores", "softmax"), a
// layer ("1", "encoder.1", "decoder.0"), and slices of the tensors shown (one batch item,
// one head). Empty means everything.
struct StepFilter {
  std::vector<std::pair<int, int>> ranges;  // inclusive step numbers
  std::vector<std::string> kinds;           // as step_kinds() names them
  std::optional<LayerSelection> layer;      // none: every layer
  std::optional<std::size_t> head;
  std::optional<std::size_t> batch;

  // Whether step `number`, of `kind`, is shown; `layer` is the layer it belongs to, or
  // nullptr for the steps outside the layers.
  bool selects(int number, const std::string& kind, const StepId* layer) const;
};

// Parses --steps: comma-separated numbers, ranges "a-b" and step kinds. Throws
// InputError("--steps", ...) naming what it could not read.
StepFilter parse_step_selection(const std::string& text);
// InputError("--steps", ...) when the filter names a step beyond the last one of the run.
void check_step_numbers(const StepFilter& filter, int last_step);
// Parses --layer into filter.layer. Throws InputError("--layer", ...) for a value that
// names no layer in any model.
void parse_layer_option(const std::string& text, StepFilter& filter);

// The step kinds --steps accepts, in walkthrough order, with what each shows.
struct StepKindDescription {
  const char* name;
  const char* description;
};
const std::vector<StepKindDescription>& step_kinds();

struct WalkthroughOptions {
  ArrayFormatOptions array;  // precision, summarization, line width (every line fits in it)
  bool show_weights = true;  // print every parameter (W_q ... W_out, gamma, beta) with its step
  bool explanations = true;  // the short "why" under a step, once per run (--brief hides them)
  bool worked = true;        // one element of each kind of operation worked out in full
  bool stats = true;         // a stats line above a tensor printed with "..." (every tensor with `full`)
  bool views = true;         // labeled tables and heatmaps of small attention matrices
  bool list_only = false;    // titles, formulas and shapes only (attn steps)
  // --full: every step in full, as the first of its kind is shown (its why, worked element,
  // intermediate forms and stats line), and vocabulary-sized tensors whole.
  bool full = false;
  std::size_t top_k = 3;  // a vocabulary-sized row is shown as its k largest entries
  // Two kinds of tensor are summarized past this many numbers (an 8x8 matrix), whatever the
  // array threshold: the feed-forward's d_ff-wide ones (W_1, W_3, W_2, hidden: an F axis),
  // four times as wide as the rest, their worked element showing the column it uses; and the
  // vocabulary-sized embedding table E, shown as the rows looked up. --full shows both.
  std::size_t wide_threshold = 64;
  // A big model's lesson (options_for_model sets it): the first layer in full, each later layer
  // as a line or two saying where its heads look, and an overview of every layer's heads.
  bool overview = false;
  bool map = true;     // the map of the run (its stages and their steps) at the top, unless steps are picked
  bool color = false;  // ANSI colours (titles, formulas, heatmap cells)
  ColorDepth color_depth = ColorDepth::Basic;
  // Heatmap cells: coloured backgrounds when colour is on, Unicode shading otherwise, or
  // plain ASCII characters when asked (terminals without Unicode).
  std::optional<HeatmapStyle> heatmap_style;
  std::array<std::size_t, 4> cell = {0, 0, 0, 0};  // --cell b,h,i,j: the element worked out
  bool cell_given = false;
  StepFilter filter;
  // --ablate: the next-token probabilities of the same input without the ablation, (B?,T,V)
  // as output.probabilities; the walkthrough shows them beside the ablated run's.
  std::shared_ptr<const Tensor> unablated_probabilities;
  // How the ablation was named on the command line ("decoder.1.1, zeroed"), for its table.
  std::string ablation_label;
  // --lens --answer: the vocabulary id whose rank, logit and probability at the last position
  // the lens's table follows with, one line per layer.
  std::optional<std::size_t> lens_answer;
  // The induction lesson, written after the steps when the learner picked none.
  std::shared_ptr<const InductionLesson> induction_lesson;
};

// The options as the lesson of `model` uses them. A big model (more heads in its longest
// stack than kOverviewFromHeads, present/print_limits.h: GPT-2 small's 12 layers of 12) has
// its tensors summarized past wide_threshold numbers, two rows and columns at each edge
// (unless --full, or a --threshold other than the default, says otherwise) and, when the
// learner picked nothing (--steps, --layer, --head, --full), the overview. Any other
// model's options are returned as they are.
WalkthroughOptions options_for_model(WalkthroughOptions options, const Model& model);

// Where a shown step starts in the text a walkthrough wrote (--pause pages by them).
struct StepPlace {
  int step;
  std::size_t offset;
};

// The walkthrough of a finished run, every entry of `trace`: the map of the run, then its
// steps. InputError for a --batch or --head index the run does not have, or a --steps number
// beyond its last step, before anything is printed.
void print_walkthrough(std::ostream& out, const Trace& trace, const Model& model, const RunInput& input,
                       const WalkthroughOptions& options, std::vector<StepPlace>* places = nullptr);

// The walkthrough made while the model runs, so that a paper-sized run holds about one
// layer's tensors rather than all of them: give it every entry as the trace stores it
// (Trace::set_entry_observer), then call finish(), which writes the map of the run and the
// steps. An entry is printed when the next one arrives, once the notes the forward pass
// attaches to it are in place. With `forget`, it drops the earlier layers' tensors from the
// trace as each new layer starts (leave it off when the whole trace is wanted afterwards,
// for a dump). Writes what print_walkthrough writes, step for step.
class PageRenderer;  // how a walkthrough is drawn besides on the terminal: present/page_renderer.h

class StreamingWalkthrough {
 public:
  // The terminal's walkthrough, written to `out`.
  StreamingWalkthrough(std::ostream& out, Trace& trace, const Model& model, const RunInput& input,
                       const WalkthroughOptions& options, bool forget);
  // No terminal text: only the pages given to draw_also (an HTML lesson with --quiet).
  StreamingWalkthrough(Trace& trace, const Model& model, const RunInput& input, const WalkthroughOptions& options,
                       bool forget);
  ~StreamingWalkthrough();
  StreamingWalkthrough(const StreamingWalkthrough&) = delete;
  StreamingWalkthrough& operator=(const StreamingWalkthrough&) = delete;

  // Draws the same steps on another page as well, such as the HTML lesson (src/html/), with
  // its own options (the same filter; they and `renderer` must outlive the walkthrough).
  // Before the first add().
  void draw_also(PageRenderer& renderer, const WalkthroughOptions& options);

  void add(const TraceEntry& entry);
  // Prints the last entry and writes everything; first InputError("--steps") when the filter
  // named a step number beyond the run's last step, unless the run stopped short
  // (`complete` false: a numeric error), when what was made is written as it is.
  void finish(bool complete = true);
  // Where each shown step starts in the terminal text finish() wrote.
  const std::vector<StepPlace>& step_places() const;

 private:
  void print_pending();
  struct State;
  Trace& trace_;
  const WalkthroughOptions& options_;
  bool forget_;
  std::unique_ptr<State> state_;
};

}  // namespace attn

#endif  // ATTN_WALKTHROUGH_H_
