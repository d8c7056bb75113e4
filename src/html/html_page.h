// The walkthrough as one web page (the HTML lesson): every step in full under its title, with
// its explanation, formula and shapes, its tensors as tables, its worked arithmetic, and the
// attention weights as SVG heatmaps per head. A step of a kind shown before keeps its title,
// formula and shapes in view and folds the rest (<details>, open with a click, no script
// needed). finish() writes the whole document: the map of the run, the overview of every
// layer's heads, then the steps.
#ifndef ATTN_HTML_HTML_PAGE_H_
#define ATTN_HTML_HTML_PAGE_H_

#include <string>
#include <vector>

#include "attn/dump.h"
#include "attn/model.h"
#include "attn/walkthrough.h"
#include "html/html_heatmap.h"
#include "present/page_renderer.h"

namespace attn {

// What the page says it shows, in its title and first lines.
struct LessonInfo {
  std::string command;  // "attn explain"
  std::string subject;  // "\"I love AI\"", "example seed004"
};

class HtmlPage : public PageRenderer {
 public:
  HtmlPage(ByteOutput& out, const Model& model, const WalkthroughOptions& options, LessonInfo info)
      : out_(out), model_(model), options_(options), info_(std::move(info)) {}

  bool compacts_repeats() const override { return false; }
  void start_step(int number) override;
  void layer_header(const std::string& text) override;
  void block_header(const std::string& text) override;
  void list_entry(int number, const std::string& kind, const std::string& title) override;
  void step_title(const StepTitle& title) override;
  void explanation(const std::string& paragraph) override;
  void compact_step(int number, const std::string& formula, const std::string& shape, int as_step) override;
  void formula(const std::string& formula, const std::string& shapes) override;
  void line(const std::string& text) override;
  void note(const std::string& text) override;
  void indented(const std::string& text) override;
  void worked(const std::string& heading, const std::string& text) override;
  void raw(const std::string& text) override;
  void tensor(const ShownTensor& shown) override;
  bool vectors_together(const NamedTensors& vectors) override;
  void side_by_side(const NamedTensors& matrices) override;
  void labeled_vector(const std::string& label, const Tensor& row) override;
  void heatmap(const HeatmapView& view) override;
  void table(const std::string& caption, const Tensor& matrix, const std::vector<std::string>& row_labels,
             const std::vector<std::string>& column_labels) override;
  void top_k(const TopKView& view) override;
  void text_table(const TextTable& table) override;
  void finish(const std::vector<MapStage>& map) override;
  // Held, finish() keeps the map and writes nothing: what follows the walkthrough (attn
  // generate's later tokens, drawn through the same calls) goes on the page too, until
  // release() writes the document.
  void hold() { held_ = true; }
  void release();

 private:
  void write_document();
  void open_step(int number, const std::string& kind, const std::string& heading);
  void close_step();
  void fold();    // what follows is folded away in a repeated step
  void unfold();  // what follows is in view again
  std::string map_html(const std::vector<MapStage>& map) const;
  std::string heading_html() const;

  ByteOutput& out_;
  const Model& model_;
  const WalkthroughOptions& options_;
  LessonInfo info_;
  std::string body_;
  bool in_step_ = false;
  bool repeat_ = false;  // the step's kind was shown in full before: its details are folded
  bool folded_ = false;
  int step_ = 0;
  int views_ = 0;  // heatmap views of the step so far
  std::string layer_, block_;
  std::vector<OverviewRow> overview_;
  std::vector<MapStage> map_;
  bool held_ = false;
};

}  // namespace attn

#endif  // ATTN_HTML_HTML_PAGE_H_
