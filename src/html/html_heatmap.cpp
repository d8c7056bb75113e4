#include "html/html_heatmap.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "html/html_canvas.h"
#include "html/html_text.h"
#include "present/heatmap.h"
#include "present/terminal.h"

namespace attn {

namespace {

constexpr double kCharWidth = 7.4;  // of a 12px sans-serif label, about
constexpr double kDiagonal = 0.72;  // a column label is drawn at 45 degrees

std::string css_color(Rgb c) { return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b); }

// Black on the bright end of the scale, white on the dark end.
const char* text_color(Rgb c) { return (0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b) / 255.0 > 0.5 ? "#000" : "#fff"; }

// The width of a 12px label in pixels, generously: capitals and the brackets of <BOS> are
// wider than the average letter (DejaVu Sans: "<BOS>" is 41 px, 5 x kCharWidth only 37),
// so that no label is clipped at the edge of its SVG.
double label_width(const std::string& label) {
  double width = 0;
  for (const char c : label)
    if ((static_cast<unsigned char>(c) & 0xc0) != 0x80)  // one per code point
      width += (c >= 'A' && c <= 'Z') || c == '<' || c == '>' || c == '=' || c == '@' || c == '%' || c == '#' ||
                       c == 'm' || c == 'w'
                   ? 10.0
                   : kCharWidth;
  return width;
}

double widest_label(const std::vector<std::string>& labels) {
  double widest = 0;
  for (const auto& l : labels) widest = std::max(widest, label_width(l));
  return widest;
}

std::string label_of(const std::vector<std::string>& labels, std::size_t i) {
  return i < labels.size() ? labels[i] : std::to_string(i);
}

struct Layout {
  double cell = 0, left = 0, top = 0, width = 0, height = 0;
  bool numbers = false, labels = false, titles = true;
};

Layout layout_of(const HeadMap& map, bool thumbnail) {
  const std::size_t S = map.weights.shape.at(0), T = map.weights.shape.at(1), n = std::max(S, T);
  Layout l;
  if (thumbnail) {
    l.cell = std::clamp(std::floor(72.0 / static_cast<double>(n)), 3.0, 24.0);
    l.titles = S * T <= 144;
    l.width = l.cell * static_cast<double>(T);
    l.height = l.cell * static_cast<double>(S);
    return l;
  }
  // Long sequences get smaller cells (the page's width is no limit, but a screen's is); below
  // 14 px a label would overlap its neighbour, so the tokens are in the hover text only.
  l.cell = n <= 8 ? 46 : n <= 16 ? 30 : n <= 64 ? 18 : 8;
  l.numbers = l.cell >= 30;
  l.labels = l.cell >= 14;
  const double column_label = l.labels ? kDiagonal * widest_label(map.columns) : 0;
  l.left = l.labels ? 10 + widest_label(map.rows) : 0;
  l.top = 18 + column_label;  // room for the rotated letters' own height
  l.width = l.left + l.cell * static_cast<double>(T) + column_label;
  l.height = l.top + l.cell * static_cast<double>(S) + 2;
  return l;
}

std::string labels_svg(const HeadMap& map, const Layout& l) {
  std::string out;
  for (std::size_t i = 0; i < map.weights.shape[0]; ++i)
    out += fmt::format("<text class=\"row-label\" x=\"{:.1f}\" y=\"{:.1f}\">{}</text>", l.left - 6,
                       l.top + (static_cast<double>(i) + 0.5) * l.cell, escaped(label_of(map.rows, i)));
  for (std::size_t j = 0; j < map.weights.shape[1]; ++j)
    out += fmt::format("<text class=\"column-label\" transform=\"translate({:.1f},{:.1f}) rotate(-45)\">{}</text>",
                       l.left + (static_cast<double>(j) + 0.5) * l.cell, l.top - 6, escaped(label_of(map.columns, j)));
  return out + "\n";
}

// The cell of query i and key j, with its hover text.
std::string cell_svg(const HeadMap& map, const Layout& l, std::size_t i, std::size_t j) {
  const std::size_t T = map.weights.shape[1];
  const double w = map.weights.data[i * T + j];
  const bool masked = !map.masked.data.empty() && map.masked.data[i * T + j] != 0;
  const Rgb color = heatmap_color(w);
  const std::string fill = masked ? "#d0d0d0" : css_color(color);
  const std::string weight = masked ? "masked (weight 0)" : fmt::format("weight {:.4f}", w);
  const double x = l.left + static_cast<double>(j) * l.cell, y = l.top + static_cast<double>(i) * l.cell;
  std::string out = fmt::format(
      "<rect class=\"cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
      "fill=\"{}\">",
      x, y, l.cell, l.cell, fill);
  if (l.titles)
    out += "<title>" +
           escaped(fmt::format("{}: query \"{}\" ({}) → key \"{}\" ({}): {}", map.head, label_of(map.rows, i), i,
                               label_of(map.columns, j), j, weight)) +
           "</title>";
  out += "</rect>";
  if (l.numbers)
    out += fmt::format("<text class=\"value\" x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\">{}</text>", x + l.cell / 2,
                       y + l.cell / 2, masked ? "#555" : text_color(color), masked ? "·" : fmt::format("{:.2f}", w));
  return out;
}

}  // namespace

std::string heatmap_svg(const HeadMap& map, bool thumbnail) {
  const Layout l = layout_of(map, thumbnail);
  const std::size_t S = map.weights.shape.at(0), T = map.weights.shape.at(1);
  std::string out = fmt::format(
      "<svg class=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" role=\"img\" aria-label=\"{}\">\n",
      thumbnail ? "thumbnail" : "heatmap", std::ceil(l.width), std::ceil(l.height), std::ceil(l.width),
      std::ceil(l.height), escaped(fmt::format("{}: attention weights of {} queries over {} keys", map.head, S, T)));
  if (l.labels) out += labels_svg(map, l);
  for (std::size_t i = 0; i < S; ++i) {
    for (std::size_t j = 0; j < T; ++j) out += cell_svg(map, l, i, j);
    out += "\n";
  }
  return out + "</svg>\n";
}

std::string color_legend() {
  return "<div class=\"legend\"><span>weight 0</span><span class=\"scale\"></span><span>1</span>"
         "<span>(each weight on the scale 0 to 1, as in the terminal)</span>"
         "<span class=\"masked-swatch\"></span><span>masked</span></div>\n";
}

std::string heatmap_group(const HeatmapView& view, const std::string& id, const std::string& name) {
  const std::size_t H = view.heads.size();
  std::string out = name.empty() ? fmt::format("<div class=\"attention\" id=\"{}\">\n", id)
                                 : fmt::format(
                                       "<div class=\"attention\" id=\"{}\" data-name=\"{}\" data-rows=\"{}\" "
                                       "data-cols=\"{}\">\n",
                                       id, escaped(name), escaped(labels_json(view.row_labels)),
                                       escaped(labels_json(view.column_labels)));
  out += element("p", "caption", view.caption);
  // The selector: radio buttons before the maps, so that CSS alone shows the head picked.
  if (H > 1) {
    const std::string name = "pick-" + id;
    out += fmt::format(
        "<input type=\"radio\" name=\"{0}\" id=\"{0}-all\" class=\"pick-all\" checked>"
        "<label for=\"{0}-all\">all heads</label>",
        name);
    for (std::size_t h = 0; h < H; ++h)
      out += fmt::format(
          "<input type=\"radio\" name=\"{0}\" id=\"{0}-{1}\" class=\"pick-{1}\">"
          "<label for=\"{0}-{1}\">{2}</label>",
          name, h, escaped(view.titles.at(h)));
    out += "\n";
  }
  out += "<div class=\"maps\">\n";
  static const Tensor kNone;
  for (std::size_t h = 0; h < H; ++h) {
    const Tensor& masked = h < view.masked.size() ? view.masked[h] : kNone;
    const std::string data = name.empty()
                                 ? ""
                                 : fmt::format(" data-s=\"{}\" data-t=\"{}\" data-w=\"{}\"", view.heads[h].shape.at(0),
                                               view.heads[h].shape.at(1), encoded_weights(view.heads[h], masked));
    out += fmt::format("<figure class=\"head h-{}\" id=\"{}-{}\"{}><figcaption>{}</figcaption>\n", h, id, h, data,
                       escaped(view.titles.at(h))) +
           heatmap_svg({view.heads[h], masked, view.row_labels, view.column_labels, view.titles.at(h)}, false) +
           "</figure>\n";
  }
  out += "</div>\n" + color_legend();
  if (!view.footnote.empty()) out += element("p", "caption", view.footnote);
  return out + "<p class=\"readout\">rows are queries, columns keys; hover over a cell for its weight</p>\n</div>\n";
}

std::string head_selector_css(std::size_t heads) {
  std::string css;
  for (std::size_t h = 0; h < heads; ++h)
    css += fmt::format(".pick-{0}:checked ~ .maps .head:not(.h-{0}) {{ display: none; }}\n", h);
  return css;
}

std::string overview_table(const std::vector<OverviewRow>& rows) {
  const HeatmapView* widest = nullptr;  // its titles head the columns
  for (const auto& row : rows)
    if (!widest || row.view.titles.size() > widest->titles.size()) widest = &row.view;
  std::string out = "<div class=\"scroll\"><table class=\"model-view\"><thead><tr><th></th>";
  for (std::size_t h = 0; widest && h < widest->titles.size(); ++h)
    out += "<th>" + escaped(widest->titles.at(h)) + "</th>";
  out += "</tr></thead><tbody>\n";
  static const Tensor kNone;
  for (const auto& row : rows) {
    out += fmt::format("<tr><th>{} <a href=\"#step-{}\">step {}</a></th>", escaped(row.name), row.step, row.step);
    for (std::size_t h = 0; row.canvas && h < row.view.titles.size(); ++h)
      out += fmt::format("<td><a href=\"#{0}-{1}\" title=\"{2}\">", row.id, h,
                         escaped(row.view.titles.at(h) + ", " + row.name)) +
             canvas_thumbnail(fmt::format("{}-{}", row.id, h), row.queries, row.keys) + "</a></td>";
    for (std::size_t h = 0; !row.canvas && h < row.view.heads.size(); ++h) {
      const HeatmapView& v = row.view;
      const Tensor& masked = h < v.masked.size() ? v.masked[h] : kNone;
      out += fmt::format("<td><a href=\"#{}-{}\" title=\"{}\">", row.id, h, escaped(v.titles.at(h) + ", " + row.name)) +
             heatmap_svg({v.heads[h], masked, v.row_labels, v.column_labels, v.titles.at(h)}, true) + "</a></td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n";
}

}  // namespace attn
