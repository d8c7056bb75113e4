// The walkthrough's output: numbered steps with their headers, and everything printed
// inside a step. Everything goes through a Page, so the learner's filters (--steps,
// --layer, --batch, --head, --brief) and modes (attn steps' list, --full) apply to all
// printers alike. The calls say what is shown (a tensor, a heatmap of weights, a labelled
// table, a top-k table), not how: the Page's PageRenderer draws them, as terminal text
// (terminal_page.h) or as a web page (src/html/), so every printer draws in both.
//
// A run teaches each thing once: the "why" of a kind of step is printed the first time the
// kind is shown and pointed back to afterwards, and a step is *detailed* (worked element,
// views, intermediate forms) the first time its kind is shown; later steps of the same kind
// are compact. --full shows every step in full.
#ifndef ATTN_PRESENT_PAGE_H_
#define ATTN_PRESENT_PAGE_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/trace.h"
#include "attn/walkthrough.h"
#include "present/page_renderer.h"

namespace attn {

// A causal encoder with an output head and no decoder: a decoder-only (GPT-style) model,
// which the walkthrough names so, whatever its trace names say.
bool is_decoder_only(const Model& model);

class Page {
 public:
  Page(PageRenderer& renderer, const Model& model, const WalkthroughOptions& options);

  // Starts step number step()+1, of the kind --steps and `attn steps` call `shown_kind`,
  // titled `title`, explained by explanation_for(why); returns whether it is shown. The
  // step is detailed when it is the first shown step of `detail_key` (default: its kind).
  bool begin_step(const char* shown_kind, const std::string& title, const std::string& why,
                  const std::string& detail_key = "");
  int step() const { return step_; }
  bool shown() const { return shown_; }
  // Whether the current step is shown in full (the first of its kind, or --full).
  bool detailed() const { return shown_ && detailed_; }
  // The shown step where `detail_key` was first detailed, 0 if none yet.
  int first_detailed(const std::string& detail_key) const;

  // Headers when the walkthrough enters a new layer or a new block of one, printed with the
  // next step that is shown.
  void enter(const StepId& id);
  // Steps outside any layer (tokens, masks, the output head): headers of a layer whose
  // steps were all filtered out must not stick to them.
  void leave_layer();

  // A big model's layer shown as a summary (WalkthroughOptions::overview): its header, then
  // `text` (its steps, where its heads look) in place of its steps, which are not shown.
  void layer_summary(const StepId& layer, const std::string& text);
  // A part of the page outside the steps: a header, preformatted lines, a paragraph.
  void aside(const std::string& header, const std::string& lines, const std::string& text);
  // Parts of an aside: a paragraph, a table of words, a heatmap (not repeated in a web page's
  // overview of every head).
  void aside_line(const std::string& text);
  void aside_table(const TextTable& table);
  void aside_heatmap(HeatmapView view);
  // Whether the steps of the layer entered last are summarized rather than shown (a big
  // model's layers after the first, on a medium that compacts repeats).
  bool layer_summarized() const;

  // The lines of a step, wrapped to the line width.
  void formula(const std::string& text);
  void shapes(const std::string& text);
  void line(const std::string& text);
  void note(const std::string& text);
  // Multi-line text (worked arithmetic, tables, heatmaps), indented.
  void indented(const std::string& text);
  // One element worked out by hand: printed in detailed steps only, under `heading`.
  void worked(const std::string& text, const char* heading = "worked, one element:");
  // A tensor as NumPy prints it, sliced by --batch and --head; its stats line when it is
  // summarized ("...") or with --full.
  void tensor(const std::string& label, const Tensor& full, bool integers = false);
  // A tensor a compact step shows too: a milestone (the decoder's input, a layer's output).
  void key_tensor(const std::string& label, const Tensor& t);
  // A parameter of the model, printed with the step that uses it.
  void weight(const std::string& label, const Tensor& w);
  // Small vectors (gamma and beta) on one line when they fit, each on its own otherwise.
  void weights(const std::vector<std::pair<std::string, const Tensor*>>& vectors);
  // Raw lines, when the step is shown in full.
  void raw(const std::string& text);
  // Matrices side by side under their labels (one W per head), when the step is shown in full.
  void side_by_side(const NamedTensors& matrices);
  // A vector after the label saying what it is ("emb[0] = E[2] (\"I\")").
  void labeled_vector(const std::string& label, const Tensor& row);
  // The explanation of `why` (explanation_for), when the step is shown in full and
  // explanations are on: under a banner (attn grad's backward pass).
  void explain(const std::string& why);
  // The run's own words for an explanation that shows what order means by a sentence and
  // its words reversed ("I love AI" from "AI love I"): cited from `words` (the first three
  // when there are more) instead of that example; ignored with fewer than two words.
  void cite_order(const std::vector<std::string>& words);
  // Attention weights drawn as heatmaps, side by side when they fit the line, else stacked.
  void heatmap(const HeatmapView& view);
  // A matrix as a boxed table with row and column labels (left out when too wide).
  void table(const std::string& caption, const Tensor& matrix, const std::vector<std::string>& row_labels,
             const std::vector<std::string>& column_labels);
  // The largest entries of vocabulary-sized rows.
  void top_k(const TopKView& view);
  // Whether the step's lines, tensors and worked elements are written: shown, in full (not
  // compact), not attn steps' list.
  bool full_text() const { return shown_ && !options_.list_only && !compact_; }
  // Whether its views (heatmaps) and notes are: shown, even compact.
  bool views_shown() const { return shown_ && !options_.list_only; }
  // Writes a formula still waiting for its shapes (at the end of the walkthrough).
  void flush_formula();
  std::size_t width() const { return options_.array.line_width; }

 private:
  void explanation(const std::string& why);
  int explained_at(const std::string& why) const;
  void write_headers();
  void flush_compact();

  PageRenderer& renderer_;
  const Model& model_;
  const WalkthroughOptions& options_;
  int step_ = 0;
  bool shown_ = false;
  bool detailed_ = false;
  std::map<std::string, int> explained_;       // why -> the step that printed it
  std::map<std::string, int> detailed_steps_;  // detail key -> the first step shown in full
  // Where the walkthrough is: the layer and the block of the last entry entered.
  std::optional<StepId> layer_;
  std::optional<StepId> block_;
  // A checkpoint's lesson opens with what it is ("Model: GPT2LMHeadModel read from DIR;
  // tokenizer byte-level BPE of 50257 tokens"), written before the first step shown.
  std::string pending_model_header_;
  // Which checkpoint tensor each weight is, by the weight's address (Model::checkpoint).
  std::map<const Tensor*, std::string> checkpoint_names_;
  std::string pending_layer_header_;
  std::string pending_block_header_;
  std::string pending_block_why_;  // the explanation printed under the block header
  std::string cited_order_;        // "\"The cat sat\" from \"sat cat The\"" (cite_order)
  std::string pending_formula_;    // a formula waiting for its shapes
  // A compact step: its formula and result shape, written as one line, and the step that
  // showed its kind in full.
  bool compact_ = false;
  int compact_as_ = 0;
  // A big model's overview: the earlier step whose worked element this one repeats (-1 once said).
  int worked_at_ = 0;
  int compact_written_ = 0;
  std::string compact_formula_, compact_shape_;
};

}  // namespace attn

#endif  // ATTN_PRESENT_PAGE_H_
