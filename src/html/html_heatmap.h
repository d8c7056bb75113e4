// Attention weights drawn as SVG heatmaps: one per head, rows the queries and columns the
// keys, each cell coloured by its weight (viridis, 0 dark to 1 bright, the same colours as the
// terminal's) with the weight written in it when the cells are large enough. Hovering a cell
// shows its query, key and weight: an SVG <title> per cell, which browsers show with
// JavaScript off; the page's script also writes it under the heatmaps. A masked cell (the key
// was hidden from that query) is grey.
//
// A step's heads come with a head selector made of radio buttons and CSS alone (all heads, or
// one), and every heatmap is also drawn small in the overview of the run's layers and heads
// (bertviz's "model view").
#ifndef ATTN_HTML_HTML_HEATMAP_H_
#define ATTN_HTML_HTML_HEATMAP_H_

#include <string>
#include <vector>

#include "attn/tensor.h"
#include "present/page_renderer.h"

namespace attn {

// One head's weights with their labels.
struct HeadMap {
  const Tensor& weights;  // (S,T)
  const Tensor& masked;   // (S,T), non-zero where masked; or empty
  const std::vector<std::string>& rows;
  const std::vector<std::string>& columns;
  std::string head;  // "head 0"
};

// The SVG of one head: labelled, its weights written in large cells (class "heatmap"), or a
// thumbnail without labels for the overview (class "thumbnail").
std::string heatmap_svg(const HeadMap& map, bool thumbnail);

// The heads of one view: the caption, the head selector, one figure per head (id
// "<id>-<head index>"), the colour legend and the line the script writes hovered cells into.
// With a `name` ("Encoder layer 0, multi-head self-attention"), the group also carries its
// weights as data for the head and model views (html_canvas.h: data-name, data-rows and
// data-cols on the group, data-w on each figure).
std::string heatmap_group(const HeatmapView& view, const std::string& id, const std::string& name = "");

// The CSS rules of the head selectors, for views of up to `heads` heads.
std::string head_selector_css(std::size_t heads);

// A row of the overview: one view of an attention block, and where its full size is.
struct OverviewRow {
  std::string name;  // "Encoder layer 0, multi-head self-attention"
  int step = 0;      // the softmax step
  std::string id;    // of its heatmap_group
  HeatmapView view;  // its heads' weights, or only their titles when drawn on canvases
  bool canvas = false;
  std::size_t queries = 0, keys = 0;  // a canvas map's S and T
};

// The overview: a table of every view's heads as thumbnails, each linked to its heatmap.
std::string overview_table(const std::vector<OverviewRow>& rows);

// The colour scale from 0 to 1 and the masked cells' grey.
std::string color_legend();

}  // namespace attn

#endif  // ATTN_HTML_HTML_HEATMAP_H_
