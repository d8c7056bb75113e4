#include "present/terminal_page.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "present/array_format.h"
#include "present/heatmap.h"
#include "present/labeled_table.h"
#include "present/tensor_stats.h"
#include "present/terminal.h"

namespace attn {

namespace {

// How heatmap cells are drawn: as asked, else coloured when colour is on; never with escape
// sequences when colour is off. On the HTML page's scale, each weight against 1.
HeatmapOptions heatmap_options(const WalkthroughOptions& options) {
  HeatmapOptions h;
  h.scale = HeatmapScale::Unit;
  h.style = options.heatmap_style.value_or(options.color ? HeatmapStyle::Color : HeatmapStyle::Shade);
  if (h.style == HeatmapStyle::Color && !options.color) h.style = HeatmapStyle::Shade;
  h.depth = options.color_depth;
  return h;
}

// The lines of text blocks placed side by side, three spaces apart, indented by two.
std::string columns_side_by_side(const std::vector<std::vector<std::string>>& columns) {
  std::size_t rows = 0;
  std::vector<std::size_t> widths;
  for (const auto& column : columns) {
    rows = std::max(rows, column.size());
    std::size_t widest = 0;
    for (const auto& l : column) widest = std::max(widest, display_width(l));
    widths.push_back(widest);
  }
  std::string text;
  for (std::size_t r = 0; r < rows; ++r) {
    std::string row = "  ";
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string cell = r < columns[i].size() ? columns[i][r] : "";
      row += cell + std::string(widths[i] - display_width(cell) + 3, ' ');
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    text += row + "\n";
  }
  return text;
}

}  // namespace

std::string TerminalPage::paint(const std::string& text, const char* code) const {
  return options_.color ? std::string("\x1b[") + code + "m" + text + kResetSequence : text;
}

// In list mode (attn steps) formulas and shapes are indented under the step's entry.
std::string TerminalPage::margin() const { return options_.list_only ? std::string(24, ' ') : "  "; }

void TerminalPage::write_wrapped(const std::string& indent, const std::string& text, const char* color) {
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) {
    const std::string full = indent + l;
    for (const auto& piece : wrap_line(full, width(), hanging_indent(full, width())))
      body_ << (color ? paint(piece, color) : piece) << "\n";
  }
}

void TerminalPage::start_step(int number) { places_.push_back({number, body_text_.size()}); }

void TerminalPage::layer_header(const std::string& text) { body_ << "\n" << paint(text, "1;35") << "\n"; }

void TerminalPage::block_header(const std::string& text) {
  body_ << (options_.list_only ? "" : "\n");
  write_wrapped("", text, "35");
}

void TerminalPage::list_entry(int number, const std::string& kind, const std::string& title) {
  body_ << fmt::format("{:>4}  {:<17} {}\n", number, kind, title);
}

void TerminalPage::step_title(const StepTitle& title) {
  // A "why" printed at an earlier step is pointed back to on the title line.
  const std::string head = fmt::format("── Step {}: {} {}", title.number, title.title,
                                       title.why_step ? fmt::format("(why: step {}) ", title.why_step) : "");
  std::string rule;
  for (std::size_t n = display_width(head); n < std::min<std::size_t>(72, width()); ++n) rule += "─";
  for (const auto& piece : wrap_line(head + rule, width(), 3)) body_ << paint(piece, "1;36") << "\n";
}

// The paragraph rewrapped to the line width, under the bar.
void TerminalPage::explanation(const std::string& paragraph) {
  const std::size_t room = width() > 8 ? width() - 4 : 4;
  for (const auto& piece : wrap_line(paragraph, room, 0)) body_ << paint("  │ " + piece, "2") << "\n";
}

// "  31  K = Y · W_k -> (T=3,H*d=4)   (as step 6)".
void TerminalPage::compact_step(int number, const std::string& formula, const std::string& shape, int as_step) {
  if (!compact_intro_) {
    compact_intro_ = true;
    write_wrapped("  ", "(kinds shown above: one line each from here on; --full shows all)", "2");
  }
  const std::string arrow = shape.empty() ? "" : " -> " + shape;
  const std::string text = fmt::format("{:>4}  {}{}   (as step {})", number, formula, arrow, as_step);
  for (const auto& piece : wrap_line(text, width(), 6)) body_ << paint(piece, "36") << "\n";
}

// A formula and its shapes share a line when they fit (never in attn steps' list).
void TerminalPage::formula(const std::string& formula, const std::string& shapes) {
  if (!formula.empty() && !shapes.empty() && !options_.list_only &&
      display_width(margin() + formula + "   " + shapes) <= width()) {
    body_ << margin() << paint(formula, "36") << "   " << shapes << "\n";
    return;
  }
  if (!formula.empty()) write_wrapped(margin(), formula, "36");
  if (!shapes.empty()) write_wrapped(margin(), shapes);
}

void TerminalPage::line(const std::string& text) { write_wrapped("  ", text); }

void TerminalPage::note(const std::string& text) { write_wrapped("  ", "note: " + text, "33"); }

void TerminalPage::indented(const std::string& text) { write_wrapped("    ", text); }

void TerminalPage::worked(const std::string& heading, const std::string& text) {
  body_ << "  " << paint(heading, "32") << "\n";
  indented(text);
}

void TerminalPage::raw(const std::string& text) { body_ << text; }

void TerminalPage::tensor(const ShownTensor& shown) {
  const std::string& label = shown.label;
  if (shown.stats) write_wrapped("  ", format_tensor_stats(shown.tensor, label.empty() ? "tensor" : label), "2");
  ArrayFormatOptions array = options_.array;
  array.integers = shown.integers;
  array.threshold = shown.threshold;
  std::string prefix = label + shown.slice;
  if (!prefix.empty()) prefix += " = ";
  body_ << prefix << format_array(shown.tensor, array, display_width(prefix)) << "\n";
}

// On one line when each fits on one and all of them fit together.
bool TerminalPage::vectors_together(const NamedTensors& vectors) {
  std::string line;
  for (const auto& [label, t] : vectors) {
    const std::string text = label + " = " + format_array(t, options_.array, label.size() + 3);
    if (text.find('\n') != std::string::npos || t.size() > options_.array.threshold) return false;
    line += (line.empty() ? "" : "   ") + text;
  }
  if (display_width(line) > width()) return false;
  body_ << line << "\n";
  return true;
}

void TerminalPage::side_by_side(const NamedTensors& matrices) {
  std::vector<std::vector<std::string>> columns;
  for (const auto& [label, matrix] : matrices) {
    std::istringstream text(label + "\n" + format_array(matrix, options_.array));
    std::vector<std::string> lines;
    for (std::string l; std::getline(text, l);) lines.push_back(l);
    columns.push_back(lines);
  }
  body_ << columns_side_by_side(columns);
}

void TerminalPage::labeled_vector(const std::string& label, const Tensor& row) {
  ArrayFormatOptions array = options_.array;
  array.line_width = array.line_width > 2 ? array.line_width - 2 : 1;  // line() indents by 2
  const std::string prefix = label + " = ";
  line(prefix + format_array(row, array, display_width(prefix)));
}

void TerminalPage::heatmap(const HeatmapView& view) {
  const std::size_t queries = view.heads.empty() ? 0 : view.heads.front().shape.at(0);
  if (queries > kHeatmapMaxQueries) {
    note(fmt::format("heatmap left out: {} queries are more than {} (the HTML page, --html FILE, draws it)", queries,
                     kHeatmapMaxQueries));
    return;
  }
  std::vector<HeatmapBlock> blocks;
  for (std::size_t h = 0; h < view.heads.size(); ++h)
    blocks.push_back({view.titles.at(h), view.heads[h], h < view.masked.size() ? view.masked[h] : Tensor()});
  const std::size_t room = width() > 4 ? width() - 4 : 1;
  const std::string text =
      render_heatmaps(blocks, view.row_labels, view.column_labels, heatmap_options(options_), room);
  if (text.empty()) {
    write_wrapped(
        "  ", fmt::format("(heatmap left out: {} keys do not fit in {} columns)", view.column_labels.size(), width()));
    return;
  }
  write_wrapped("  ", view.caption);
  // Coloured cells are not wrapped: render_heatmaps fitted them to the line already.
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);)
    if (display_width(l) + 4 <= width())
      body_ << "    " << l << "\n";
    else
      write_wrapped("    ", l);
  if (!view.footnote.empty()) write_wrapped("  ", view.footnote);
}

// Left out when too wide: the tensor above shows the same numbers.
void TerminalPage::table(const std::string& caption, const Tensor& matrix, const std::vector<std::string>& row_labels,
                         const std::vector<std::string>& column_labels) {
  LabeledTableOptions table;
  table.precision = options_.array.precision;
  const std::string text = render_labeled_table(matrix, row_labels, column_labels, table);
  std::size_t widest = 0;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) widest = std::max(widest, display_width(l));
  if (widest + 4 > width()) return;
  line(caption);
  std::istringstream again(text);
  for (std::string l; std::getline(again, l);) body_ << "    " << l << "\n";
}

void TerminalPage::top_k(const TopKView& view) {
  line(view.caption);
  std::size_t label_width = 0;
  for (const auto& label : view.row_labels) label_width = std::max(label_width, display_width(label));
  for (std::size_t r = 0; r < view.rows.size(); ++r) {
    std::string row = pad_right(view.row_labels[r], label_width);
    for (const auto& [token, value] : view.rows[r]) row += fmt::format("  {} {:.{}f}", token, value, view.decimals);
    write_wrapped("    ", row);
  }
}

void TerminalPage::text_table(const TextTable& table) {
  if (!table.caption.empty()) line(table.caption);
  indented(table.text);
}

std::string TerminalPage::map_text(const std::vector<MapStage>& map) const {
  if (map.empty()) return "";
  std::vector<std::string> ranges;
  std::size_t widest = 0;
  for (const auto& stage : map) {
    ranges.push_back(stage.first == stage.last ? std::to_string(stage.first)
                                               : fmt::format("{}-{}", stage.first, stage.last));
    widest = std::max(widest, ranges.back().size());
  }
  std::string out = wrapped("The steps of this run, by stage (--steps A-B shows some of them):", width()) + "\n";
  for (std::size_t i = 0; i < map.size(); ++i)
    out += wrapped(fmt::format("  {:<{}}  {}", ranges[i], widest, map[i].text), width()) + "\n";
  return out;
}

// The map and the steps; the places become offsets into what is written.
void TerminalPage::finish(const std::vector<MapStage>& map) {
  const std::string text = map_text(map);
  for (auto& place : places_) place.offset += text.size();
  out_ << text;
  body_text_.write_to(out_);
}

}  // namespace attn
