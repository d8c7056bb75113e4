// The walkthrough as terminal text: lines wrapped to the line width, colours when they are on,
// tensors as NumPy prints them, heatmaps of shades or coloured cells, steps of a kind met again
// in one line. The text is kept (held_text.h) until finish(), which writes the map of the run and then the
// steps, and records where each step starts (--pause pages by them).
#ifndef ATTN_PRESENT_TERMINAL_PAGE_H_
#define ATTN_PRESENT_TERMINAL_PAGE_H_

#include <ostream>
#include <string>
#include <vector>

#include "attn/walkthrough.h"
#include "present/held_text.h"
#include "present/page_renderer.h"

namespace attn {

class TerminalPage : public PageRenderer {
 public:
  TerminalPage(std::ostream& out, const WalkthroughOptions& options) : out_(out), options_(options) {}

  // Where each shown step starts in what finish() wrote.
  const std::vector<StepPlace>& places() const { return places_; }

  bool compacts_repeats() const override { return true; }
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

 private:
  std::string paint(const std::string& text, const char* code) const;
  std::string margin() const;
  std::size_t width() const { return options_.array.line_width; }
  void write_wrapped(const std::string& indent, const std::string& text, const char* color = nullptr);
  std::string map_text(const std::vector<MapStage>& map) const;

  std::ostream& out_;
  const WalkthroughOptions& options_;
  HeldText body_text_;
  std::ostream body_{&body_text_};
  std::vector<StepPlace> places_;
  bool compact_intro_ = false;
};

}  // namespace attn

#endif  // ATTN_PRESENT_TERMINAL_PAGE_H_
