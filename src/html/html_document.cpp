#include "html/html_document.h"

#include "html/html_canvas.h"
#include "html/html_heatmap.h"
#include "html/html_text.h"

namespace attn {

namespace {

// The page's look. System fonts only: nothing is fetched. The scale's colours are
// heatmap_color's five anchors (viridis).
constexpr const char* kStyle = R"css(
:root { --ink: #1d2330; --muted: #5b6473; --rule: #d9dde3; --accent: #1f6f98; --code: #f4f6f8; --layer: #74398c; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", sans-serif; }
header, nav.map, section.overview, main, footer { max-width: 1120px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 22px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 28px 0 8px; }
h2.layer { color: var(--layer); border-bottom: 2px solid #e8dbef; padding-bottom: 4px; margin-top: 44px; }
h3.block { color: var(--layer); font-size: 16px; margin: 24px 0 4px; }
p.run { color: var(--muted); margin: 0; font-size: 14px; }
p.how { color: var(--muted); font-size: 14px; max-width: 90ch; }
section.step { border-left: 3px solid var(--rule); padding: 2px 0 6px 14px; margin: 18px 0; }
h4.step-title { font-size: 17px; margin: 0 0 2px; color: var(--accent); }
p.why { color: var(--muted); border-left: 3px solid #cfe3ee; padding-left: 10px; margin: 6px 0; max-width: 85ch; }
p.refs { font-size: 13px; color: var(--muted); margin: 0 0 4px; }
code, pre, table.tensor, table.labeled, table.top-k, p.stats {
  font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 13px; }
p.formula, p.shapes { margin: 4px 0; }
p.formula code { color: #0f5a73; font-weight: 600; }
p.shapes code, span.comment { color: var(--muted); font-weight: normal; }
p.line { margin: 4px 0; white-space: pre-wrap; }
pre { background: var(--code); padding: 8px 10px; border-radius: 4px; overflow-x: auto; margin: 4px 0; }
p.worked-title { color: #2e7d32; font-weight: 600; margin: 8px 0 0; font-size: 14px; }
p.note { color: #7a5000; background: #fff6dc; padding: 4px 8px; border-radius: 4px; }
p.stats { font-size: 12px; color: var(--muted); margin: 2px 0; }
figure { margin: 8px 0; }
figcaption { font-size: 13px; color: var(--muted); margin-bottom: 2px; }
figcaption code { color: var(--ink); font-weight: 600; }
.scroll { overflow-x: auto; max-width: 100%; }
table.tensor, table.labeled, table.top-k { border-collapse: collapse; margin: 2px 14px 6px 0;
  display: inline-table; vertical-align: top; }
table.tensor td, table.labeled td { text-align: right; padding: 1px 7px; border: 1px solid #e3e6ea; }
table th { font-weight: normal; color: var(--muted); padding: 1px 6px; font-size: 11px; }
table caption { caption-side: top; text-align: left; font-size: 12px; color: var(--muted); }
td.gap, th.gap, tr.gap td { color: var(--muted); text-align: center; border: none; }
p.gap { margin: 0 0 0 3em; color: var(--muted); }
table.top-k th { text-align: left; }
table.top-k td { padding: 1px 10px; }
table.words { border-collapse: collapse; margin: 2px 14px 6px 0; font-size: 13px; }
table.words td, table.words th { text-align: left; padding: 1px 8px; border: 1px solid #e3e6ea; }
span.token { color: var(--accent); }
.side-by-side { display: flex; flex-wrap: wrap; gap: 0 24px; }
details.more, details.whole { margin: 6px 0; }
details > summary { cursor: pointer; color: var(--accent); font-size: 14px; }
.attention { margin: 10px 0 14px; }
.attention p.caption { margin: 4px 0; font-size: 14px; }
.attention input[type=radio] { position: absolute; opacity: 0; }
.attention label { display: inline-block; padding: 1px 10px; margin: 0 4px 6px 0; border: 1px solid var(--rule);
  border-radius: 12px; font-size: 13px; cursor: pointer; }
.attention input:checked + label { background: var(--accent); color: #fff; border-color: var(--accent); }
.attention input:focus-visible + label { outline: 2px solid var(--accent); }
.maps { display: flex; flex-wrap: wrap; gap: 8px 28px; align-items: flex-start; }
figure.head figcaption { font-weight: 600; color: var(--ink); }
svg text { font-family: system-ui, "DejaVu Sans", sans-serif; font-size: 12px; }
svg text.row-label, svg text.column-label { fill: var(--ink); }
svg text.row-label { text-anchor: end; dominant-baseline: central; }
svg text.value { text-anchor: middle; dominant-baseline: central; font-size: 11px; pointer-events: none; }
svg rect.cell { stroke: #fff; stroke-width: 1; }
svg rect.cell:hover { stroke: #e4572e; stroke-width: 3; }
svg.thumbnail { display: block; border: 1px solid var(--rule); }
.legend { display: flex; align-items: center; gap: 6px; font-size: 12px; color: var(--muted); margin: 4px 0; }
.legend .scale { width: 160px; height: 10px;
  background: linear-gradient(to right, #440154, #3b528b, #21918c, #5ec962, #fde725); }
.legend .masked-swatch { width: 14px; height: 10px; background: #d0d0d0; margin-left: 12px; }
p.readout { font-size: 13px; color: var(--muted); min-height: 1.5em; margin: 2px 0; }
table.model-view th { text-align: left; font-size: 13px; color: var(--ink); padding: 4px 12px 4px 0; }
table.model-view td { padding: 3px; }
nav.map ol { list-style: none; padding: 0; margin: 0; }
nav.map li { margin: 1px 0; }
nav.map a { display: inline-block; min-width: 7.5em; }
footer { color: var(--muted); font-size: 13px; padding-top: 12px; padding-bottom: 32px; }
)css";

// Hover: the hovered cell's query, key and weight (its <title>) written under its heatmaps.
constexpr const char* kScript = R"js(
(function () {
  document.addEventListener('mouseover', function (event) {
    var cell = event.target.closest ? event.target.closest('rect.cell') : null;
    var group = cell ? cell.closest('.attention, .overview') : null;
    var title = cell ? cell.querySelector('title') : null;
    var readout = group ? group.querySelector('.readout') : null;
    if (title && readout) readout.textContent = title.textContent;
  });
})();
)js";

}  // namespace

std::string lesson_document(const LessonParts& parts) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta name=\"generator\" content=\"attn\">\n<title>" +
         escaped(parts.title) + "</title>\n<style>" + kStyle + head_selector_css(parts.heads) + canvas_style() +
         "</style>\n</head>\n" + "<body>\n" + parts.header + parts.map + parts.overview + "<main>\n" + parts.body +
         "</main>\n" + "<footer>Written by attn: every step of attention, on numbers you can check.</footer>\n" +
         "<script>" + kScript + canvas_script() + "</script>\n</body>\n</html>\n";
}

}  // namespace attn
