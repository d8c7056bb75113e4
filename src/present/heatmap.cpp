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

namespace {

std::string value_text(double value, int decimals) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  return fmt::format("{:.{}f}", value == 0 ? 0.0 : value, decimals);
}

void trim_right(std::string& line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
}

// Readable text on a background: black on bright colours, white on dark ones.
Rgb text_color_on(Rgb background) {
  const double luminance = (0.2126 * background.r + 0.7152 * background.g + 0.0722 * background.b) / 255.0;
  return luminance > 0.5 ? Rgb{0, 0, 0} : Rgb{255, 255, 255};
}

std::string legend_line(HeatmapStyle style) {
  if (style == HeatmapStyle::Ascii)
    return "scale 0 \" .:-=+*#%@\" 1 (one character per tenth); <- marks the strongest key";
  return "scale 0 \" ░▒▓█\" 1 (one block per fifth); ◀ marks the strongest key";
}

}  // namespace

std::string render_heatmap(const Tensor& weights, const std::vector<std::string>& row_labels_in,
                           const std::vector<std::string>& column_labels_in, const HeatmapOptions& options) {
  // Named, not a structured binding: the lambdas below capture these (clang refuses
  // to capture a binding in C++17).
  const LabeledMatrix labeled = labeled_matrix(weights, row_labels_in, column_labels_in, "heatmap");
  const std::size_t rows = labeled.rows, columns = labeled.columns;
  const std::vector<std::string>& row_labels = labeled.row_labels;
  const std::vector<std::string>& column_labels = labeled.column_labels;
  const auto value = [&](std::size_t i, std::size_t j) { return weights.data[i * columns + j]; };

  std::size_t row_label_width = 0;
  for (const auto& label : row_labels) row_label_width = std::max(row_label_width, display_width(label));
  std::vector<std::size_t> column_width(columns);
  for (std::size_t j = 0; j < columns; ++j) {
    column_width[j] = display_width(column_labels[j]);
    for (std::size_t i = 0; i < rows; ++i)
      column_width[j] = std::max(column_width[j], display_width(value_text(value(i, j), options.decimals)));
  }

  std::string out;
  std::string header(row_label_width, ' ');
  for (std::size_t j = 0; j < columns; ++j) header += " " + pad_left(column_labels[j], column_width[j]);
  trim_right(header);
  out += header + "\n";

  const char* marker = options.style == HeatmapStyle::Ascii ? "<-" : "◀";
  for (std::size_t i = 0; i < rows; ++i) {
    std::string line = pad_right(row_labels[i], row_label_width);
    double strongest = NAN;
    for (std::size_t j = 0; j < columns; ++j)
      if (!std::isnan(value(i, j)) && (std::isnan(strongest) || value(i, j) > strongest)) strongest = value(i, j);
    for (std::size_t j = 0; j < columns; ++j) {
      const double v = value(i, j);
      line += " ";
      if (options.style == HeatmapStyle::Color && !std::isnan(v)) {
        const Rgb background = heatmap_color(v);
        line += background_sequence(background, options.depth) +
                foreground_sequence(text_color_on(background), options.depth) +
                pad_left(value_text(v, options.decimals), column_width[j]) + kResetSequence;
      } else if (options.style == HeatmapStyle::Color) {
        line += pad_left(value_text(v, options.decimals), column_width[j]);
      } else {
        const std::string glyph = heatmap_glyph(v, options.style);
        for (std::size_t k = 0; k < column_width[j]; ++k) line += glyph;
      }
    }
    if (!std::isnan(strongest)) {
      std::string keys;
      for (std::size_t j = 0; j < columns; ++j)
        if (value(i, j) == strongest) keys += (keys.empty() ? "" : ", ") + column_labels[j];
      line += fmt::format("  {} {} {}", marker, keys, value_text(strongest, options.decimals));
    }
    trim_right(line);
    out += line + "\n";
  }
  if (options.legend && options.style != HeatmapStyle::Color) out += legend_line(options.style) + "\n";
  return out;
}

std::string render_heatmaps_side_by_side(const std::vector<Tensor>& weights, const std::vector<std::string>& titles,
                                         const std::vector<std::string>& row_labels,
                                         const std::vector<std::string>& column_labels, const HeatmapOptions& options,
                                         std::size_t gap) {
  if (titles.size() != weights.size())
    throw InternalError(fmt::format("heatmap: {} titles for {} matrices", titles.size(), weights.size()));
  HeatmapOptions block_options = options;
  block_options.legend = false;
  std::vector<std::vector<std::string>> blocks;
  std::vector<std::size_t> block_width;
  std::size_t height = 0;
  for (std::size_t h = 0; h < weights.size(); ++h) {
    std::vector<std::string> lines = {titles[h]};
    std::istringstream text(render_heatmap(weights[h], row_labels, column_labels, block_options));
    for (std::string line; std::getline(text, line);) lines.push_back(line);
    std::size_t width = 0;
    for (const auto& line : lines) width = std::max(width, display_width(line));
    height = std::max(height, lines.size());
    blocks.push_back(std::move(lines));
    block_width.push_back(width);
  }
  std::string out;
  for (std::size_t r = 0; r < height; ++r) {
    std::string line;
    for (std::size_t h = 0; h < blocks.size(); ++h) {
      const std::string cell = r < blocks[h].size() ? blocks[h][r] : "";
      line += (h ? std::string(gap, ' ') : "") + pad_right(cell, block_width[h]);
    }
    trim_right(line);
    out += line + "\n";
  }
  if (options.legend && options.style != HeatmapStyle::Color) out += legend_line(options.style) + "\n";
  return out;
}

}  // namespace attn
