#include "present/heatmap.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/error.h"
#include "present/axis_labels.h"

namespace attn {

std::vector<std::string> heatmap_glyphs(HeatmapStyle style) {
  if (style == HeatmapStyle::Ascii) return {" ", ".", ":", "-", "=", "+", "*", "#", "%", "@"};
  return {" ", "░", "▒", "▓", "█"};
}

std::string heatmap_glyph(double value, HeatmapStyle style) {
  if (std::isnan(value)) return "?";
  const std::vector<std::string> ramp = heatmap_glyphs(style);
  const double clamped = std::clamp(value, 0.0, 1.0);
  const auto n = ramp.size();
  const auto index = std::min(n - 1, static_cast<std::size_t>(std::floor(clamped * static_cast<double>(n))));
  return ramp[index];
}

Rgb heatmap_color(double value) {
  // viridis at 0, 0.25, 0.5, 0.75, 1: dark purple, blue, teal, green, yellow.
  static constexpr std::array<std::array<double, 3>, 5> kAnchors = {
      {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};
  const double clamped = std::isnan(value) ? 0.0 : std::clamp(value, 0.0, 1.0);
  const double position = clamped * 4;
  const auto low = std::min<std::size_t>(3, static_cast<std::size_t>(std::floor(position)));
  const double t = position - static_cast<double>(low);
  const auto channel = [&](int c) {
    const double a = kAnchors[low][c], b = kAnchors[low + 1][c];
    return static_cast<std::uint8_t>(std::lround(a + (b - a) * t));
  };
  return {channel(0), channel(1), channel(2)};
}

std::string heatmap_cell_colors(double value, ColorDepth depth) {
  const double clamped = std::isnan(value) ? 0.0 : std::clamp(value, 0.0, 1.0);
  if (depth == ColorDepth::Basic) {
    // Blue, bright blue, cyan, yellow, bright yellow: xterm's luminances 17, 104, 161, 190,
    // 237, so brighter is more. (The nearest basic colour to each viridis shade is not.)
    static constexpr std::array<int, 5> kBackground = {44, 104, 46, 43, 103};
    static constexpr std::array<int, 5> kText = {97, 97, 30, 30, 30};
    const auto band = std::min<std::size_t>(4, static_cast<std::size_t>(std::floor(clamped * 5)));
    return fmt::format("\x1b[{}m\x1b[{}m", kBackground[band], kText[band]);
  }
  const Rgb background = heatmap_color(clamped);
  const double luminance = (0.2126 * background.r + 0.7152 * background.g + 0.0722 * background.b) / 255.0;
  const Rgb text = luminance > 0.5 ? Rgb{0, 0, 0} : Rgb{255, 255, 255};
  return background_sequence(background, depth) + foreground_sequence(text, depth);
}

namespace {

std::string value_text(double value, int decimals) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  return fmt::format("{:.{}f}", value == 0 ? 0.0 : value, decimals);
}

void trim_right(std::string& line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
}

std::string repeated(const std::string& glyph, std::size_t times) {
  std::string out;
  for (std::size_t k = 0; k < times; ++k) out += glyph;
  return out;
}

const char* mask_glyph(HeatmapStyle style) { return style == HeatmapStyle::Ascii ? "x" : "·"; }
const char* marker(HeatmapStyle style) { return style == HeatmapStyle::Ascii ? "<-" : "◀"; }

// The legend: what the shades or colours mean against which scale, the masked cells (when
// any), the arrow, and the keys of numbered columns.
std::string legend_text(const HeatmapOptions& options, bool any_masked, const std::vector<std::string>& columns) {
  const std::string against = options.scale == HeatmapScale::Row   ? "the row's largest"
                              : options.scale == HeatmapScale::Map ? "the map's largest"
                                                                   : "1 (the weight itself, the HTML page's scale)";
  std::string out;
  if (options.style == HeatmapStyle::Ascii) {
    out += "\" .:-=+*#%@\" tenths of " + against;
  } else if (options.style == HeatmapStyle::Shade) {
    out += "\" \"<.2 ░<.4 ▒<.6 ▓<.8 █ of " + against;
  } else {
    out += "weight / " + against + ":";
    const char* bands[] = {"<.2", "<.4", "<.6", "<.8", "≤1"};
    for (int k = 0; k < 5; ++k)
      out += std::string(" ") + heatmap_cell_colors((k + 0.5) / 5, options.depth) + bands[k] + kResetSequence;
  }
  out += any_masked ? std::string("; ") + mask_glyph(options.style) + " masked" : "";
  out += std::string("; ") + marker(options.style) + (options.marker_names_key ? " strongest key\n" : " strongest\n");
  if (options.numbered_columns) {
    std::string keys = "columns:";
    for (std::size_t j = 0; j < columns.size(); ++j)
      keys += fmt::format(" {} {}{}", j, columns[j], j + 1 < columns.size() ? "," : "");
    out += keys + "\n";
  }
  return out;
}

// The divisor of each row's weights for the shading: the largest unmasked weight of the row
// or of the map (1 when that is not positive), or 1 on the unit scale.
std::vector<double> scale_of_rows(const Tensor& w, const Tensor& masked, std::size_t rows, std::size_t columns,
                                  HeatmapScale scale) {
  if (scale == HeatmapScale::Unit) return std::vector<double>(rows, 1.0);
  std::vector<double> largest(rows, 0.0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < columns; ++j) {
      const double v = w.data[i * columns + j];
      if (!std::isnan(v) && (masked.data.empty() || masked.data[i * columns + j] == 0))
        largest[i] = std::max(largest[i], v);
    }
  if (scale == HeatmapScale::Map) {
    const double map = *std::max_element(largest.begin(), largest.end());
    std::fill(largest.begin(), largest.end(), map);
  }
  for (double& l : largest)
    if (!(l > 0)) l = 1;
  return largest;
}

bool is_masked(const Tensor& masked, std::size_t k) { return !masked.data.empty() && masked.data[k] != 0; }

std::string cell_text(double v, double scale, std::size_t width, bool masked, const HeatmapOptions& options) {
  if (masked) return pad_left(mask_glyph(options.style), width);
  if (std::isnan(v)) return repeated("?", width);
  if (options.style != HeatmapStyle::Color) return repeated(heatmap_glyph(v / scale, options.style), width);
  const std::string text =
      options.numbered_columns ? std::string(width, ' ') : pad_left(value_text(v, options.decimals), width);
  return heatmap_cell_colors(v / scale, options.depth) + text + kResetSequence;
}

}  // namespace

std::string render_heatmap(const Tensor& weights, const std::vector<std::string>& row_labels_in,
                           const std::vector<std::string>& column_labels_in, const HeatmapOptions& options,
                           const Tensor& masked) {
  // Named, not a structured binding: the lambdas below capture these (clang refuses
  // to capture a binding in C++17).
  const LabeledMatrix labeled = labeled_matrix(weights, row_labels_in, column_labels_in, "heatmap");
  const std::size_t rows = labeled.rows, columns = labeled.columns;
  const std::vector<std::string>& row_labels = labeled.row_labels;
  const std::vector<std::string>& column_labels = labeled.column_labels;
  if (!masked.data.empty() && masked.shape != weights.shape)
    throw InternalError(fmt::format("heatmap: mask of shape {} for weights of shape {}", shape_string(masked.shape),
                                    shape_string(weights.shape)));
  const auto value = [&](std::size_t i, std::size_t j) { return weights.data[i * columns + j]; };
  const std::vector<double> scale = scale_of_rows(weights, masked, rows, columns, options.scale);

  std::size_t row_label_width = 0;
  for (const auto& label : row_labels) row_label_width = std::max(row_label_width, display_width(label));
  std::vector<std::string> heads(columns);
  std::vector<std::size_t> column_width(columns);
  for (std::size_t j = 0; j < columns; ++j) {
    heads[j] = options.numbered_columns ? std::to_string(j) : column_labels[j];
    // Shades fill their label's width (two at least); coloured cells hold the value too.
    column_width[j] = std::max<std::size_t>(display_width(heads[j]), options.numbered_columns ? 1 : 2);
    if (!options.numbered_columns && options.style == HeatmapStyle::Color)
      for (std::size_t i = 0; i < rows; ++i)
        column_width[j] = std::max(column_width[j], display_width(value_text(value(i, j), options.decimals)));
  }

  std::string header(row_label_width, ' ');
  for (std::size_t j = 0; j < columns; ++j) header += " " + pad_left(heads[j], column_width[j]);
  trim_right(header);
  std::string out = header + "\n";
  bool any_masked = false;
  for (std::size_t i = 0; i < rows; ++i) {
    std::string line = pad_right(row_labels[i], row_label_width);
    double strongest = NAN;
    for (std::size_t j = 0; j < columns; ++j) {
      const bool hidden = is_masked(masked, i * columns + j);
      any_masked = any_masked || hidden;
      line += " " + cell_text(value(i, j), scale[i], column_width[j], hidden, options);
      if (!hidden && !std::isnan(value(i, j)) && (std::isnan(strongest) || value(i, j) > strongest))
        strongest = value(i, j);
    }
    if (!std::isnan(strongest)) {
      std::string keys;
      for (std::size_t j = 0; j < columns; ++j)
        if (value(i, j) == strongest && !is_masked(masked, i * columns + j))
          keys += (keys.empty() ? "" : ", ") + column_labels[j];
      line += options.marker_names_key
                  ? fmt::format("  {} {} {}", marker(options.style), keys, value_text(strongest, options.decimals))
                  : fmt::format("  {} {}", marker(options.style), value_text(strongest, options.decimals));
    }
    trim_right(line);
    out += line + "\n";
  }
  if (options.legend) out += legend_text(options, any_masked, column_labels);
  return out;
}

namespace {

// The blocks rendered without legends, each a title line and its lines; their widths.
struct RenderedBlocks {
  std::vector<std::vector<std::string>> lines;
  std::vector<std::size_t> widths;
};

RenderedBlocks render_blocks(const std::vector<HeatmapBlock>& blocks, const std::vector<std::string>& row_labels,
                             const std::vector<std::string>& column_labels, HeatmapOptions options) {
  options.legend = false;
  RenderedBlocks rendered;
  for (const auto& block : blocks) {
    std::vector<std::string> lines;
    if (!block.title.empty()) lines.push_back(block.title);
    std::istringstream text(render_heatmap(block.weights, row_labels, column_labels, options, block.masked));
    for (std::string line; std::getline(text, line);) lines.push_back(line);
    std::size_t width = 0;
    for (const auto& line : lines) width = std::max(width, display_width(line));
    rendered.lines.push_back(std::move(lines));
    rendered.widths.push_back(width);
  }
  return rendered;
}

std::string side_by_side(const RenderedBlocks& r, std::size_t gap) {
  std::size_t height = 0;
  for (const auto& lines : r.lines) height = std::max(height, lines.size());
  std::string out;
  for (std::size_t row = 0; row < height; ++row) {
    std::string line;
    for (std::size_t h = 0; h < r.lines.size(); ++h) {
      const std::string cell = row < r.lines[h].size() ? r.lines[h][row] : "";
      line += (h ? std::string(gap, ' ') : "") + pad_right(cell, r.widths[h]);
    }
    trim_right(line);
    out += line + "\n";
  }
  return out;
}

std::string stacked(const RenderedBlocks& r) {
  std::string out;
  for (const auto& lines : r.lines)
    for (const auto& line : lines) out += line + "\n";
  return out;
}

}  // namespace

std::string render_heatmaps(const std::vector<HeatmapBlock>& blocks, const std::vector<std::string>& row_labels,
                            const std::vector<std::string>& column_labels, const HeatmapOptions& options_in,
                            std::size_t width, std::size_t gap) {
  if (blocks.empty()) return "";
  bool any_masked = false;
  for (const auto& block : blocks)
    for (double m : block.masked.data) any_masked = any_masked || m != 0;
  HeatmapOptions options = options_in;
  for (bool numbered : {options_in.numbered_columns, true}) {
    options.numbered_columns = numbered;
    const RenderedBlocks r = render_blocks(blocks, row_labels, column_labels, options);
    std::size_t total = 0, widest = 0;
    for (std::size_t w : r.widths) {
      total += (total ? gap : 0) + w;
      widest = std::max(widest, w);
    }
    if (widest > width) continue;
    // Heads side by side read better than stacked: drop the key's name from the markers
    // when that is what makes them fit (the shade shows which key it is).
    if (total > width && blocks.size() > 1 && options.marker_names_key) {
      HeatmapOptions short_markers = options;
      short_markers.marker_names_key = false;
      const RenderedBlocks narrow = render_blocks(blocks, row_labels, column_labels, short_markers);
      std::size_t narrow_total = 0;
      for (std::size_t w : narrow.widths) narrow_total += (narrow_total ? gap : 0) + w;
      if (narrow_total <= width) {
        const std::string legend = options.legend ? legend_text(short_markers, any_masked, column_labels) : "";
        return side_by_side(narrow, gap) + legend;
      }
    }
    const std::string legend =
        options.legend ? legend_text(options, any_masked,
                                     column_labels.empty()
                                         ? labels_or_indices({}, blocks[0].weights.shape.back(), "column", "heatmap")
                                         : column_labels)
                       : "";
    return (total <= width ? side_by_side(r, gap) : stacked(r)) + legend;
  }
  return "";
}

}  // namespace attn
