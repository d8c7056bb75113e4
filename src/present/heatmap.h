// Attention weights drawn as a heatmap: one row per query, one column per key, the row and
// column labelled with their tokens, and the strongest key of each row named at the end of
// the row. Three looks:
//
//   Shade  Unicode blocks by fifths of the scale:  " " ░ ▒ ▓ █
//   Ascii  ten characters " .:-=+*#%@", one per tenth, for terminals without Unicode
//   Color  a background colour per cell with the value printed inside it (16 colours: five
//          ordered from dark to bright; 256 colours and truecolour: viridis)
//
// The scale: each weight on the whole scale of weights, 0 to 1 (Unit: what the walkthrough
// and the HTML page draw, so that a row of three 0.33 is not drawn solid), against its row's
// largest (Row: a query's preferences show even when all its weights are small) or against
// the largest of the map (Map); the legend says which. A masked cell (the mask hid that key) shows "·" (Ascii: "x"),
// distinct from a weight that is merely small; a NaN cell shows "?". A column of shades is as wide as its label (two at
// least), a column of coloured cells as the wider of its label and the values printed in it. The output is
// deterministic and ends with a newline.
#ifndef ATTN_PRESENT_HEATMAP_H_
#define ATTN_PRESENT_HEATMAP_H_

#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/tensor.h"
#include "present/terminal.h"

namespace attn {

enum class HeatmapScale { Row, Map, Unit };

struct HeatmapOptions {
  HeatmapStyle style = HeatmapStyle::Shade;
  ColorDepth depth = ColorDepth::Color256;  // for HeatmapStyle::Color
  HeatmapScale scale = HeatmapScale::Row;
  int decimals = 2;               // digits after the point of the values ("0.29")
  bool legend = true;             // the lines explaining the shades or colours, the mask and the arrow
  bool numbered_columns = false;  // columns headed 0, 1, ... and narrow: for many keys
  bool marker_names_key = true;   // "◀ love 0.51"; false: "◀ 0.51", so that heads fit side by side
};

// One heatmap: a (rows, columns) matrix of weights, rows = queries, columns = keys, and
// optionally which cells were masked (same shape, non-zero = masked). Labels default to the
// indices "0", "1", ... when empty; otherwise their counts must match the matrix
// (InternalError if not, or if the matrix is not 2-D).
struct HeatmapBlock {
  std::string title;  // "head 0", or empty
  Tensor weights;
  Tensor masked;  // empty: nothing masked
};

// The ramp of glyphs, lowest first: " ░▒▓█" or " .:-=+*#%@" (one glyph per element).
std::vector<std::string> heatmap_glyphs(HeatmapStyle style);

// The glyph for a value in [0,1] (clamped): ramp[min(n-1, floor(value*n))], "?" for NaN.
std::string heatmap_glyph(double value, HeatmapStyle style);

// The colour of a value in [0,1] (clamped) on a dark-to-bright ramp (viridis' five anchor
// colours, linearly interpolated), so that stronger attention is brighter.
Rgb heatmap_color(double value);

// The background and text escape sequences of a cell of value in [0,1] at `depth`: with 16
// colours one of five basic colours ordered by brightness (blue, bright blue, cyan, yellow,
// bright yellow, one per fifth), else heatmap_color's.
std::string heatmap_cell_colors(double value, ColorDepth depth);

// One block, without a title.
std::string render_heatmap(const Tensor& weights, const std::vector<std::string>& row_labels,
                           const std::vector<std::string>& column_labels, const HeatmapOptions& options = {},
                           const Tensor& masked = Tensor());

// Several heads' heatmaps, each under its title: side by side (`gap` spaces apart) when that
// fits in `width` columns, else one under the other; with numbered columns when even one
// does not fit; "" when nothing fits. The legend, when on, is printed once under them.
std::string render_heatmaps(const std::vector<HeatmapBlock>& blocks, const std::vector<std::string>& row_labels,
                            const std::vector<std::string>& column_labels, const HeatmapOptions& options,
                            std::size_t width, std::size_t gap = 4);

}  // namespace attn

#endif  // ATTN_PRESENT_HEATMAP_H_
