// How a Page is drawn. The Page decides what a walkthrough shows (the learner's filters, which
// steps are in full, each explanation given once) and hands each thing to a renderer as what
// it is: a step's title, its explanation, a formula with its shapes, a tensor, worked
// arithmetic, attention weights as matrices with their labels, a table. The terminal's
// renderer (terminal_page.h) lays them out as text; the HTML lesson's (src/html/) as a web
// page. So a printer, written once against the Page, draws in every medium.
#ifndef ATTN_PRESENT_PAGE_RENDERER_H_
#define ATTN_PRESENT_PAGE_RENDERER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attn/tensor.h"

namespace attn {

// One head's attention weights as a heatmap: which cells were masked, and the labels.
struct HeatmapView {
  std::vector<Tensor> heads;   // one (S,T) matrix per head shown
  std::vector<Tensor> masked;  // per head, 1 where the key was masked (-inf), or empty
  std::vector<std::string> titles;
  std::vector<std::string> row_labels, column_labels;
  std::string caption;                    // the line above the heatmap
  std::string footnote;                   // a line below it (how to read the rows), or empty
  std::optional<std::size_t> batch_item;  // which one, when the batch has several
  bool in_overview = true;                // drawn again in a web page's overview of every head
};

// A table of words (the head-role table, the induction lesson's tables): a terminal draws
// `text`, its own layout of the cells; a web page a <table> of them.
struct TextTable {
  std::string caption;                         // the line above it, or empty
  std::vector<std::string> header;             // the column headings (the first over the row labels)
  std::vector<std::vector<std::string>> rows;  // each row's label, then its cells
  std::string text;                            // the terminal's layout
};

// The cells in left-aligned columns two spaces apart, the header first, without trailing
// spaces: a TextTable's text when nothing else lays it out.
std::string aligned_columns(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// The k largest entries of each row of a vocabulary-sized tensor.
struct TopKView {
  std::string caption;
  std::vector<std::string> row_labels;                            // "after \"I\" (0)"
  std::vector<std::vector<std::pair<std::string, double>>> rows;  // (token, value), largest first
  int decimals = 4;
};

// A shown step's title line.
struct StepTitle {
  int number = 0;
  std::string kind;   // as --steps names it: "scores"
  std::string title;  // "Raw scores"
  int why_step = 0;   // the earlier step that explained this kind of step, 0 when none did
  int as_step = 0;    // the earlier step that showed this kind in full, 0 for the first
};

// A tensor as the Page shows it: the slice --batch and --head leave, under its label.
struct ShownTensor {
  const Tensor& tensor;
  std::string label;             // "Q"; may be empty
  std::string slice;             // "[b=0,h=1]" when --batch or --head picked a slice of it, else ""
  bool integers = false;         // token ids, masks of 0 and 1
  bool stats = false;            // with its stats line
  std::size_t threshold = 1000;  // summarized past this many elements (ArrayFormatOptions::threshold)
};

// One line of the map of the run: a stage and its steps.
struct MapStage {
  std::string text;  // "encoder layer 0: self-attention, feed-forward"
  int first = 0, last = 0;
};

// Labelled vectors or matrices shown together (one W per head, gamma and beta).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class PageRenderer {
 public:
  virtual ~PageRenderer() = default;

  // Whether a step of a kind shown in full already is drawn as one line (the terminal) rather
  // than in full (a medium that can fold it away).
  virtual bool compacts_repeats() const = 0;
  // A shown step starts: called before anything of it, its layer's headers included.
  virtual void start_step(int number) = 0;
  // "══ Encoder layer 0 of 1 (post-norm: ...) ══" and "── Multi-head self-attention, ... ──".
  virtual void layer_header(const std::string& text) = 0;
  virtual void block_header(const std::string& text) = 0;
  // attn steps' list: one entry per step.
  virtual void list_entry(int number, const std::string& kind, const std::string& title) = 0;
  virtual void step_title(const StepTitle& title) = 0;
  // Why a kind of step exists, one paragraph.
  virtual void explanation(const std::string& paragraph) = 0;
  // A step drawn as one line: its formula without the comment, its result's shape.
  virtual void compact_step(int number, const std::string& formula, const std::string& shape, int as_step) = 0;
  // A formula and the shapes that go with it; either may be empty.
  virtual void formula(const std::string& formula, const std::string& shapes) = 0;
  virtual void line(const std::string& text) = 0;
  virtual void note(const std::string& text) = 0;
  // Preformatted lines (worked arithmetic, a bracketed list), indented.
  virtual void indented(const std::string& text) = 0;
  // One element worked out by hand, under `heading` ("worked, one element:").
  virtual void worked(const std::string& heading, const std::string& text) = 0;
  // Lines written as they are.
  virtual void raw(const std::string& text) = 0;
  virtual void tensor(const ShownTensor& shown) = 0;
  // Small vectors drawn together; false when they are to be shown one by one instead.
  virtual bool vectors_together(const NamedTensors& vectors) = 0;
  // Matrices side by side, each under its label.
  virtual void side_by_side(const NamedTensors& matrices) = 0;
  // A vector after a label that says what it is: emb[0] = E[2] ("I") = [...].
  virtual void labeled_vector(const std::string& label, const Tensor& row) = 0;
  virtual void heatmap(const HeatmapView& view) = 0;
  // A matrix with labelled rows and columns.
  virtual void table(const std::string& caption, const Tensor& matrix, const std::vector<std::string>& row_labels,
                     const std::vector<std::string>& column_labels) = 0;
  virtual void top_k(const TopKView& view) = 0;
  virtual void text_table(const TextTable& table) = 0;
  // The walkthrough is over: the map of the run first (empty when not shown), then the steps.
  virtual void finish(const std::vector<MapStage>& map) = 0;
};

}  // namespace attn

#endif  // ATTN_PRESENT_PAGE_RENDERER_H_
