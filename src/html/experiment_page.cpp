#include "html/experiment_page.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "html/html_text.h"
#include "present/experiment_report.h"
#include "present/heatmap.h"

namespace attn {

namespace {

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222}"
    "table.grid{border-collapse:collapse;font:12px monospace;margin:0.5em 0 1.5em}"
    "table.grid th{font-weight:normal;padding:2px 6px;text-align:right;white-space:pre}"
    "table.grid td{padding:3px 6px;text-align:right;min-width:3em}"
    "pre{background:#f6f6f6;padding:1em;overflow-x:auto}p.note{color:#555}";

std::string cell(double v, const std::string& tooltip) {
  if (std::isnan(v)) return "<td></td>";
  const double shade = std::min(1.0, std::fabs(v));
  const Rgb c = heatmap_color(shade);
  return fmt::format("<td style=\"background:rgb({},{},{});color:{}\" title=\"{}\">{:.2f}</td>", c.r, c.g, c.b,
                     shade > 0.55 ? "#000" : "#fff", escaped(tooltip), v);
}

std::string grid_table(const EffectGrid& grid) {
  std::string html = element("h2", "", grid.title) + "<table class=\"grid\"><tr><th></th>";
  for (const std::string& c : grid.column_labels) html += "<th>" + escaped(c) + "</th>";
  html += "</tr>";
  for (std::size_t r = 0; r < grid.row_labels.size(); ++r) {
    html += "<tr><th>" + escaped(grid.row_labels[r]) + "</th>";
    for (std::size_t c = 0; c < grid.cells[r].size(); ++c)
      html += cell(grid.cells[r][c],
                   fmt::format("{}, {}: {:.6f}", grid.row_labels[r], grid.column_labels[c], grid.cells[r][c]));
    html += "</tr>";
  }
  return html + "</table>";
}

std::string joined(const Model& model, const std::vector<std::string>& tokens) {
  std::string text;
  for (const auto& t : tokens) text += (text.empty() ? "" : " ") + readable_token(model, t);
  return text;
}

}  // namespace

std::string patch_page(const Model& model, const PatchResult& result, const std::string& title) {
  const SiteStack& last = result.stacks.back();
  const Metric& m = result.metric;
  const std::string answer = readable_token(model, m.answer);
  const std::string metric = m.wrong
                                 ? fmt::format("logit(\"{}\") - logit(\"{}\")", answer, readable_token(model, *m.wrong))
                                 : fmt::format("logit(\"{}\")", answer);
  std::string body = element("h1", "", title);
  body += element("p", "", "clean: " + joined(model, last.tokens));
  body += element("p", "", "corrupt: " + joined(model, last.corrupt_tokens));
  body += element("p", "",
                  fmt::format("metric m = {} at the last position: clean run {:.6f}, corrupted run {:.6f}", metric,
                              result.clean, result.corrupt));
  body += element("p", "note",
                  "Each cell: the corrupted run again with that one activation replaced by the clean run's; the "
                  "normalised effect (m - m_corrupt) / (m_clean - m_corrupt): 1 restores the clean answer, 0 "
                  "changes nothing.");
  if (result.detail) {
    body += "<pre>" + preformatted(site_arithmetic(model, result, 4)) + "</pre>";
  } else {
    for (const EffectGrid& grid : effect_grids(model, result)) body += grid_table(grid);
    body += element("h2", "", "strongest sites") + "<ul>";
    for (const std::string& s : strongest_sites(model, result, 5)) body += element("li", "", s);
    body += "</ul>";
  }
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{}</style></head>"
      "<body>{}</body></html>\n",
      escaped(title), kStyle, body);
}

}  // namespace attn
