#include "attn/loss_curve.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "present/terminal.h"

namespace attn {

namespace {

// Column c's value: the mean loss of its run of steps.
std::vector<double> column_means(const std::vector<double>& losses, std::size_t columns) {
  std::vector<double> means(columns, 0.0);
  const std::size_t n = losses.size();
  for (std::size_t c = 0; c < columns; ++c) {
    const std::size_t begin = c * n / columns, end = std::max(begin + 1, (c + 1) * n / columns);
    double sum = 0;
    for (std::size_t i = begin; i < end; ++i) sum += losses[i];
    means[c] = sum / static_cast<double>(end - begin);
  }
  return means;
}

// The cell of row `row` (0 at the bottom) for a column filled to `eighths` of a row each.
const char* cell(std::size_t eighths, std::size_t row, bool unicode) {
  static const char* const kBlocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  const std::size_t below = row * 8;
  const std::size_t fill = eighths <= below ? 0 : std::min<std::size_t>(eighths - below, 8);
  if (unicode) return kBlocks[fill];
  return fill >= 4 ? "#" : (fill > 0 ? "." : " ");
}

}  // namespace

std::string loss_curve(const std::vector<double>& losses, const LossCurveOptions& options) {
  if (losses.empty()) return "";
  const double top = *std::max_element(losses.begin(), losses.end());
  const std::string top_label = fmt::format("loss {:.4g}", top);
  const std::size_t label_width = top_label.size() + 1;
  const std::size_t columns =
      std::min(losses.size(), std::max<std::size_t>(options.width, label_width + 11) - label_width - 1);
  const std::vector<double> means = column_means(losses, columns);
  const std::size_t rows = std::max<std::size_t>(options.height, 1);
  const char* tick = options.unicode ? "┤" : "+";
  std::string out;
  for (std::size_t r = rows; r-- > 0;) {
    const std::string label = r + 1 == rows ? top_label : (r == 0 ? "0" : "");
    out += pad_left(label, label_width - 1) + " " + (label.empty() ? (options.unicode ? "│" : "|") : tick);
    for (double v : means) {
      const double scaled = top > 0 ? v / top * static_cast<double>(rows * 8) : 0;
      out += cell(static_cast<std::size_t>(scaled + 0.5), r, options.unicode);
    }
    out += "\n";
  }
  std::string axis;
  for (std::size_t c = 0; c < columns; ++c) axis += options.unicode ? "─" : "-";
  out += std::string(label_width, ' ') + (options.unicode ? "└" : "+") + axis + "\n";
  const std::string last = fmt::format("step {}", losses.size());
  const std::size_t gap = columns + 1 > last.size() + 1 ? columns + 1 - last.size() - 1 : 1;
  out += std::string(label_width, ' ') + " 1" + std::string(gap > 1 ? gap - 1 : 1, ' ') + last + "\n";
  return out;
}

bool terminal_shows_unicode() {
  const char* term = std::getenv("TERM");
  if (term && std::string(term) == "dumb") return false;
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* value = std::getenv(name);
    if (!value || !*value) continue;
    std::string v(value);
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return v.find("utf-8") != std::string::npos || v.find("utf8") != std::string::npos;
  }
  return true;
}

}  // namespace attn
