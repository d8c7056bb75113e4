// Attention weights drawn as a heatmap: one row per query, one column per key, the row and
// column labelled with their tokens, and the strongest key of each row named at the end of
// the row. Three looks:
//
//   Shade  Unicode blocks by value:  " " [0,0.2)  ░ [0.2,0.4)  ▒ [0.4,0.6)  ▓ [0.6,0.8)  █ [0.8,1]
//   Ascii  ten characters " .:-=+*#%@", one per tenth of [0,1], for terminals without Unicode
//   Color  a background colour per cell (256-colour or truecolour escape sequences) with the
//          value printed inside it
//
// Values are expected in [0,1] (softmax weights) and are clamped to it for the shading and the
// colour; a NaN cell shows "?". The layout is the same in every look: each column is as wide as
// the wider of its label and its printed value, so the looks line up with each other and with a
// labeled table of the same weights. The output is deterministic and ends with a newline.
#ifndef ATTN_PRESENT_HEATMAP_H_
#define ATTN_PRESENT_HEATMAP_H_

#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/tensor.h"
#include "present/terminal.h"

namespace attn {

struct HeatmapOptions {
  HeatmapStyle style = HeatmapStyle::Shade;
  ColorDepth depth = ColorDepth::Color256;  // for HeatmapStyle::Color
  int decimals = 2;                         // digits after the point of the values ("0.29")
  bool legend = true;                       // a last line explaining the characters (Shade, Ascii)
};

// The ramp of glyphs, lowest first: " ░▒▓█" or " .:-=+*#%@" (one glyph per element).
std::vector<std::string> heatmap_glyphs(HeatmapStyle style);

// The glyph for a value in [0,1] (clamped): ramp[min(n-1, floor(value*n))], "?" for NaN.
std::string heatmap_glyph(double value, HeatmapStyle style);

// The colour of a value in [0,1] (clamped) on a dark-to-bright ramp (viridis' five anchor
// colours, linearly interpolated), so that stronger attention is brighter.
Rgb heatmap_color(double value);

// weights: a (rows, columns) matrix, rows = queries, columns = keys. Labels default to the
// indices "0", "1", ... when empty; otherwise their counts must match the matrix
// (InternalError if not, or if the matrix is not 2-D).
std::string render_heatmap(const Tensor& weights, const std::vector<std::string>& row_labels,
                           const std::vector<std::string>& column_labels, const HeatmapOptions& options = {});

// Several heads' heatmaps next to each other (one block per head, `gap` spaces between),
// each block titled with titles[h]. All blocks use the same labels and options; the legend,
// when on, is printed once under them.
std::string render_heatmaps_side_by_side(const std::vector<Tensor>& weights, const std::vector<std::string>& titles,
                                         const std::vector<std::string>& row_labels,
                                         const std::vector<std::string>& column_labels,
                                         const HeatmapOptions& options = {}, std::size_t gap = 4);

}  // namespace attn

#endif  // ATTN_PRESENT_HEATMAP_H_
