// Attention weights drawn from compact data, for a page that must stay small at any length:
// a big model's heads (12 layers of 12 on GPT-2 small) or a long text's (a 280-token map has
// 78,400 weights). Each head is one <canvas> carrying its weights as data (each weight to 4
// decimals, 0 to 10000 as a little-endian uint16, 65535 for a masked cell, in base64: under 3
// bytes a weight, where an SVG cell takes some 250); the page's script draws it (the same
// viridis colours as the SVG maps and the terminal), writes a cell's query, key and weight
// under the maps on hover or click, draws the overview's thumbnails from the drawn maps, and
// from the same data the head view and the model view (html_document.cpp). A small map of a
// small model stays an SVG (html_heatmap.h), readable without the script.
#ifndef ATTN_HTML_HTML_CANVAS_H_
#define ATTN_HTML_HTML_CANVAS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "attn/tensor.h"
#include "present/page_renderer.h"

namespace attn {

// An SVG map holds at most this many cells; a bigger one, or any of a big model, is a canvas.
constexpr std::size_t kSvgMaxCells = 1024;

// Whether a map of S queries over T keys is drawn on a canvas.
bool drawn_on_canvas(std::size_t S, std::size_t T, bool big_model);

// The bytes a map's cell takes in the page: an SVG cell's (its rect, colour and hover text,
// about 300 with its thumbnail), a canvas cell's (its weight in base64).
double page_bytes_per_cell(bool canvas);

// The weights of one (S,T) map as the canvas carries them: base64 of S*T uint16.
std::string encoded_weights(const Tensor& weights, const Tensor& masked);

// The labels as a JSON array of strings (in an attribute, escaped by the caller).
std::string labels_json(const std::vector<std::string>& labels);

// The heads of one view as canvases: the same caption, head selector, figure ids
// ("<id>-<head index>") and readout line as heatmap_group's SVG maps; `name` says whose
// ("Decoder-only (GPT-style) layer 3, masked self-attention") in the head and model views.
std::string canvas_group(const HeatmapView& view, const std::string& id, const std::string& name);

// An overview's thumbnail of the map drawn in figure `figure_id`, drawn from it by the script.
std::string canvas_thumbnail(const std::string& figure_id, std::size_t S, std::size_t T);

// The head view and the model view (bertviz's), drawn by the script from every canvas map of
// the page; empty when the page has none.
std::string attention_explorer();

// The script that draws the canvases, the thumbnails, the head view and the model view, and
// reads a canvas cell out on hover or click; the page's CSS for them.
const char* canvas_script();
const char* canvas_style();

}  // namespace attn

#endif  // ATTN_HTML_HTML_CANVAS_H_
