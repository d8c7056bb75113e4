#include "html/html_canvas.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "html/html_heatmap.h"
#include "html/html_text.h"

namespace attn {

namespace {

constexpr std::uint16_t kMaskedCell = 65535;

std::string base64(const std::vector<std::uint8_t>& bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t n = (std::uint32_t{bytes[i]} << 16) |
                            (i + 1 < bytes.size() ? std::uint32_t{bytes[i + 1]} << 8 : 0) |
                            (i + 2 < bytes.size() ? std::uint32_t{bytes[i + 2]} : 0);
    out += kDigits[(n >> 18) & 63];
    out += kDigits[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[n & 63] : '=';
  }
  return out;
}

// The width of a 12px label, generously (as html_heatmap.cpp's SVG labels).
double label_width(const std::string& label) {
  double width = 0;
  for (const char c : label)
    if ((static_cast<unsigned char>(c) & 0xc0) != 0x80)
      width += (c >= 'A' && c <= 'Z') || c == '<' || c == '>' ? 10 : 7.4;
  return width;
}

double widest_label(const std::vector<std::string>& labels) {
  double widest = 0;
  for (const auto& l : labels) widest = std::max(widest, label_width(l));
  return widest;
}

struct CanvasLayout {
  std::size_t cell = 1, left = 0, top = 0, width = 0, height = 0;
};

// Big cells with their labels around them for a few tokens, a pixel or two per cell for
// hundreds (about 560 pixels across; the tokens are in the hover text).
CanvasLayout canvas_layout(const HeatmapView& view, std::size_t S, std::size_t T) {
  const std::size_t n = std::max(S, T);
  CanvasLayout l;
  l.cell = n <= 8 ? 46 : n <= 16 ? 30 : n <= 32 ? 18 : std::max<std::size_t>(1, 560 / n);
  if (l.cell >= 14) {
    l.left = static_cast<std::size_t>(std::ceil(10 + widest_label(view.row_labels)));
    l.top = static_cast<std::size_t>(std::ceil(18 + 0.72 * widest_label(view.column_labels)));
  }
  l.width =
      l.left + l.cell * T + (l.cell >= 14 ? static_cast<std::size_t>(0.72 * widest_label(view.column_labels)) : 0);
  l.height = l.top + l.cell * S + 2;
  return l;
}

}  // namespace

bool drawn_on_canvas(std::size_t S, std::size_t T, bool big_model) { return big_model || S * T > kSvgMaxCells; }

double page_bytes_per_cell(bool canvas) { return canvas ? 2.7 : 300; }

std::string encoded_weights(const Tensor& weights, const Tensor& masked) {
  std::vector<std::uint8_t> bytes(2 * weights.size());
  for (std::size_t k = 0; k < weights.size(); ++k) {
    const bool hidden = !masked.data.empty() && masked.data[k] != 0;
    const double w = std::clamp(weights.data[k], 0.0, 1.0);
    const auto v = hidden || std::isnan(w) ? kMaskedCell : static_cast<std::uint16_t>(std::lround(w * 10000));
    bytes[2 * k] = static_cast<std::uint8_t>(v & 0xff);
    bytes[2 * k + 1] = static_cast<std::uint8_t>(v >> 8);
  }
  return base64(bytes);
}

std::string labels_json(const std::vector<std::string>& labels) {
  std::string out = "[";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    out += i ? ",\"" : "\"";
    for (const char c : labels[i]) {
      if (c == '"' || c == '\\')
        out += std::string("\\") + c;
      else if (static_cast<unsigned char>(c) < 0x20)
        out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
      else
        out += c;
    }
    out += '"';
  }
  return out + "]";
}

std::string canvas_group(const HeatmapView& view, const std::string& id, const std::string& name) {
  const std::size_t H = view.heads.size();
  const std::size_t S = H ? view.heads[0].shape.at(0) : 0, T = H ? view.heads[0].shape.at(1) : 0;
  std::string out = fmt::format(
      "<div class=\"attention canvas-maps\" id=\"{}\" data-name=\"{}\" data-rows=\"{}\" data-cols=\"{}\">\n", id,
      escaped(name), escaped(labels_json(view.row_labels)), escaped(labels_json(view.column_labels)));
  out += element("p", "caption", view.caption);
  if (H > 1) {
    const std::string pick = "pick-" + id;
    out += fmt::format(
        "<input type=\"radio\" name=\"{0}\" id=\"{0}-all\" class=\"pick-all\" checked>"
        "<label for=\"{0}-all\">all heads</label>",
        pick);
    for (std::size_t h = 0; h < H; ++h)
      out += fmt::format(
          "<input type=\"radio\" name=\"{0}\" id=\"{0}-{1}\" class=\"pick-{1}\"><label for=\"{0}-{1}\">{2}</label>",
          pick, h, escaped(view.titles.at(h)));
    out += "\n";
  }
  const CanvasLayout l = canvas_layout(view, S, T);
  out += "<div class=\"maps\">\n";
  static const Tensor kNone;
  for (std::size_t h = 0; h < H; ++h) {
    const Tensor& masked = h < view.masked.size() ? view.masked[h] : kNone;
    out += fmt::format(
        "<figure class=\"head h-{0}\" id=\"{1}-{0}\"><figcaption>{2}</figcaption>\n"
        "<canvas class=\"heatmap\" width=\"{3}\" height=\"{4}\" data-s=\"{5}\" data-t=\"{6}\" data-cell=\"{7}\" "
        "data-left=\"{8}\" data-top=\"{9}\" data-head=\"{2}\" data-w=\"{10}\" role=\"img\" aria-label=\"{2}: attention "
        "weights of {5} queries over {6} keys\">{2}: drawn by the page's script (--dump writes every weight)</canvas>"
        "</figure>\n",
        h, id, escaped(view.titles.at(h)), l.width, l.height, S, T, l.cell, l.left, l.top,
        encoded_weights(view.heads[h], masked));
  }
  out += "</div>\n" + color_legend();
  if (!view.footnote.empty()) out += element("p", "caption", view.footnote);
  return out +
         "<p class=\"readout\">rows are queries, columns keys; hover over a cell (or click it) for its "
         "weight</p>\n</div>\n";
}

std::string canvas_thumbnail(const std::string& figure_id, std::size_t S, std::size_t T) {
  const std::size_t n = std::max<std::size_t>({S, T, 1});
  const std::size_t cell = std::clamp<std::size_t>(72 / n, 1, 24);
  const std::size_t scale = cell * n < 24 ? 24 / n : cell;  // at least 24 pixels across
  return fmt::format("<canvas class=\"thumbnail\" width=\"{}\" height=\"{}\" data-of=\"{}\"></canvas>",
                     std::max<std::size_t>(scale * T, std::min<std::size_t>(T, 72)),
                     std::max<std::size_t>(scale * S, std::min<std::size_t>(S, 72)), figure_id);
}

std::string attention_explorer() {
  return "<section class=\"explorer\" id=\"head-view\"><h2>Head view: where each token looks</h2>\n"
         "<p class=\"how\">Pick a layer; hover over (or click) a token on the left to draw lines to the tokens it "
         "reads on the right, one colour per head, the line as strong as the weight. Tick heads to show or hide "
         "them.</p>\n"
         "<div class=\"explorer-controls\"><label>layer <select class=\"hv-layer\"></select></label> "
         "<span class=\"hv-heads\"></span></div>\n"
         "<div class=\"hv-canvas\"><noscript>(the head view is drawn by the page's script)</noscript></div>\n"
         "</section>\n"
         "<section class=\"explorer\" id=\"model-view\"><h2>Model view: one query in every layer and head</h2>\n"
         "<p class=\"how\">Pick a query; each cell is one head of one layer, its bars that query's weights over "
         "the keys (left to right), taller is more weight. Hover over a bar for its key and weight.</p>\n"
         "<div class=\"explorer-controls\"><label>query <select class=\"mv-query\"></select></label></div>\n"
         "<div class=\"mv-grid\"><noscript>(the model view is drawn by the page's script)</noscript></div>\n"
         "<p class=\"mv-readout readout\"></p>\n"
         "</section>\n";
}

namespace {

constexpr const char* kCanvasStyle = R"css(
canvas.heatmap { display: block; max-width: 100%; image-rendering: pixelated; cursor: crosshair; }
canvas.thumbnail { display: block; border: 1px solid var(--rule); image-rendering: pixelated; }
section.explorer { max-width: 1120px; margin: 0 auto; padding: 0 24px; }
.explorer-controls { margin: 6px 0; font-size: 14px; }
.explorer-controls label { margin-right: 10px; }
.hv-heads label { display: inline-block; margin: 0 6px 2px 0; font-size: 13px; }
.hv-canvas svg text { font-size: 12px; cursor: pointer; }
.hv-canvas svg text.picked { font-weight: 700; }
table.mv td { padding: 1px; }
table.mv th { font-size: 12px; text-align: left; padding-right: 8px; font-weight: normal; }
canvas.mv-cell { display: block; border: 1px solid var(--rule); }
)css";

// (No address of any site in here: the page fetches nothing.)
constexpr const char* kCanvasScript = R"js(
(function () {
  var MASKED = 65535, ANCHORS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  var LUT = [];  // the colour of each weight 0.0000 .. 1.0000, as heatmap_color computes it
  for (var v = 0; v <= 10000; ++v) {
    var p = v / 10000 * 4, low = Math.min(3, Math.floor(p)), t = p - low, a = ANCHORS[low], b = ANCHORS[low + 1];
    LUT.push([0, 1, 2].map(function (c) { return Math.round(a[c] + (b[c] - a[c]) * t); }));
  }
  var GREY = [208, 208, 208];
  // SVG's namespace, a name and not an address: nothing is fetched, and the page holds no
  // address but its SVG maps' xmlns.
  var SVG_NS = ['ht', 'tp://www.w3.org/2000/svg'].join('');
  function weights(el) {
    if (!el._w) {
      var text = atob(el.dataset.w), w = new Uint16Array(text.length >> 1);
      for (var k = 0; k < w.length; ++k) w[k] = text.charCodeAt(2 * k) | (text.charCodeAt(2 * k + 1) << 8);
      el._w = w;
    }
    return el._w;
  }
  function labels(group, which) {
    var key = '_' + which;
    if (!group[key]) group[key] = JSON.parse(group.dataset[which] || '[]');
    return group[key];
  }
  function weightText(v) { return v === MASKED ? 'masked (weight 0)' : 'weight ' + (v / 10000).toFixed(4); }
  function drawMap(canvas) {
    var S = +canvas.dataset.s, T = +canvas.dataset.t, cell = +canvas.dataset.cell;
    var left = +canvas.dataset.left, top = +canvas.dataset.top, w = weights(canvas);
    var ctx = canvas.getContext('2d'), img = ctx.createImageData(T * cell, S * cell), px = img.data;
    var gap = cell >= 14 ? 1 : 0;  // big cells apart by a white line, as the SVG maps
    for (var i = 0; i < S; ++i)
      for (var j = 0; j < T; ++j) {
        var v = w[i * T + j], c = v === MASKED ? GREY : LUT[Math.min(v, 10000)];
        for (var y = gap; y < cell; ++y)
          for (var x = gap, o = ((i * cell + y) * T * cell + j * cell + x) * 4; x < cell; ++x, o += 4) {
            px[o] = c[0]; px[o + 1] = c[1]; px[o + 2] = c[2]; px[o + 3] = 255;
          }
      }
    ctx.putImageData(img, left, top);
    if (cell < 14) return;
    var group = canvas.closest('.attention'), rows = labels(group, 'rows'), cols = labels(group, 'cols');
    ctx.font = '12px system-ui, "DejaVu Sans", sans-serif';
    ctx.fillStyle = '#1d2330';
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (i = 0; i < S; ++i) ctx.fillText(rows[i] === undefined ? i : rows[i], left - 6, top + (i + 0.5) * cell);
    ctx.textAlign = 'left';
    for (j = 0; j < T; ++j) {
      ctx.save();
      ctx.translate(left + (j + 0.5) * cell, top - 6);
      ctx.rotate(-Math.PI / 4);
      ctx.fillText(cols[j] === undefined ? j : cols[j], 0, 0);
      ctx.restore();
    }
    if (cell < 30) return;
    ctx.textAlign = 'center';
    ctx.font = '11px system-ui, "DejaVu Sans", sans-serif';
    for (i = 0; i < S; ++i)
      for (j = 0; j < T; ++j) {
        var value = w[i * T + j], rgb = value === MASKED ? GREY : LUT[value];
        ctx.fillStyle = value === MASKED ? '#555' : (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255 > 0.5 ? '#000' : '#fff';
        ctx.fillText(value === MASKED ? '·' : (value / 10000).toFixed(2), left + (j + 0.5) * cell, top + (i + 0.5) * cell);
      }
  }
  function cellAt(canvas, event) {
    var r = canvas.getBoundingClientRect(), cell = +canvas.dataset.cell;
    var x = (event.clientX - r.left) * canvas.width / r.width - canvas.dataset.left;
    var y = (event.clientY - r.top) * canvas.height / r.height - canvas.dataset.top;
    var i = Math.floor(y / cell), j = Math.floor(x / cell);
    return i >= 0 && j >= 0 && i < +canvas.dataset.s && j < +canvas.dataset.t ? {i: i, j: j} : null;
  }
  function readCell(canvas, i, j) {
    var group = canvas.closest('.attention'), rows = labels(group, 'rows'), cols = labels(group, 'cols');
    return canvas.dataset.head + ': query "' + rows[i] + '" (' + i + ') → key "' + cols[j] + '" (' + j + '): ' +
           weightText(weights(canvas)[i * +canvas.dataset.t + j]);
  }
  function showCell(event) {
    var canvas = event.target.closest ? event.target.closest('canvas.heatmap') : null;
    var at = canvas ? cellAt(canvas, event) : null;
    var readout = at ? canvas.closest('.attention').querySelector('.readout') : null;
    if (readout) readout.textContent = readCell(canvas, at.i, at.j);
  }
  document.addEventListener('mousemove', showCell);
  document.addEventListener('click', showCell);
  window.attnReadCell = readCell;  // for a test, or a reader's console
  var maps = document.querySelectorAll('canvas.heatmap[data-w]');
  for (var m = 0; m < maps.length; ++m) drawMap(maps[m]);
  var thumbs = document.querySelectorAll('canvas.thumbnail[data-of]');
  for (var n = 0; n < thumbs.length; ++n) {
    var figure = document.getElementById(thumbs[n].dataset.of), src = figure && figure.querySelector('canvas.heatmap');
    if (!src) continue;
    var ctx = thumbs[n].getContext('2d'), cell = +src.dataset.cell;
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(src, +src.dataset.left, +src.dataset.top, src.dataset.t * cell, src.dataset.s * cell, 0, 0,
                  thumbs[n].width, thumbs[n].height);
  }

  // The head view and the model view read every block's data: a canvas's, or an SVG figure's.
  function blocks() {
    var out = [], groups = document.querySelectorAll('main .attention[data-name]');
    for (var g = 0; g < groups.length; ++g) {
      var heads = [], carriers = groups[g].querySelectorAll('[data-w]');
      for (var h = 0; h < carriers.length; ++h) {
        var figure = carriers[h].closest('figure');
        heads.push({el: carriers[h], title: figure.querySelector('figcaption').textContent,
                    S: +carriers[h].dataset.s, T: +carriers[h].dataset.t});
      }
      if (heads.length) out.push({name: groups[g].dataset.name, group: groups[g], heads: heads});
    }
    return out;
  }
  // A colour per head, as bertviz gives them (d3's category10, and two more)
  var HEAD_COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
                      '#bcbd22', '#17becf', '#393b79', '#637939'];
  function hue(h) { return HEAD_COLOURS[h % HEAD_COLOURS.length]; }
  function explorer() {
    var all = blocks(), hv = document.getElementById('head-view'), mv = document.getElementById('model-view');
    if (!hv || !mv || !all.length) return;
    var layer = hv.querySelector('.hv-layer'), box = hv.querySelector('.hv-heads'), shown = [];
    all.forEach(function (b, k) { layer.add(new Option(b.name, k)); });
    var query = all[0].heads[0].S - 1;  // the last query reads every position
    function headBoxes() {
      box.textContent = '';
      shown = [];
      all[+layer.value].heads.forEach(function (head, h, heads) {
        var label = document.createElement('label'), tick = document.createElement('input');
        tick.type = 'checkbox';
        tick.checked = true;
        tick.dataset.head = h;
        tick.addEventListener('change', drawHeadView);
        label.style.color = hue(h);
        label.appendChild(tick);
        label.appendChild(document.createTextNode(head.title));
        box.appendChild(label);
        shown.push(tick);
      });
    }
    function drawHeadView() {
      var b = all[+layer.value], rows = labels(b.group, 'rows'), cols = labels(b.group, 'cols');
      var S = b.heads[0].S, T = b.heads[0].T, step = 20, width = 520, ns = SVG_NS;
      var svg = document.createElementNS(ns, 'svg'), q = Math.min(query, S - 1);
      svg.setAttribute('width', width);
      svg.setAttribute('height', (Math.max(S, T) + 1) * step);
      svg.setAttribute('class', 'head-view');
      function text(x, y, s, anchor, cls) {
        var t = document.createElementNS(ns, 'text');
        t.setAttribute('x', x); t.setAttribute('y', y); t.setAttribute('text-anchor', anchor);
        if (cls) t.setAttribute('class', cls);
        t.textContent = s;
        return svg.appendChild(t);
      }
      for (var i = 0; i < S; ++i)
        text(150, (i + 1) * step, rows[i], 'end', i === q ? 'query picked' : 'query').dataset.i = i;
      for (var j = 0; j < T; ++j) text(370, (j + 1) * step, cols[j], 'start', 'key');
      b.heads.forEach(function (head, h) {
        if (!shown[h] || !shown[h].checked) return;
        var w = weights(head.el);
        for (var j = 0; j < T; ++j) {
          var v = w[q * T + j];
          if (v === MASKED || v === 0) continue;
          var line = document.createElementNS(ns, 'line');
          line.setAttribute('x1', 158); line.setAttribute('y1', (q + 1) * step - 4);
          line.setAttribute('x2', 362); line.setAttribute('y2', (j + 1) * step - 4);
          line.setAttribute('stroke', hue(h));
          line.setAttribute('stroke-width', 2);
          line.setAttribute('stroke-opacity', (v / 10000).toFixed(4));
          line.dataset.head = h;
          line.dataset.key = j;
          svg.appendChild(line);
        }
      });
      var place = hv.querySelector('.hv-canvas');
      place.textContent = '';
      place.appendChild(svg);
      svg.addEventListener('mouseover', pick);
      svg.addEventListener('click', pick);
    }
    function pick(event) {
      var i = event.target.dataset ? event.target.dataset.i : undefined;
      if (i === undefined || +i === query) return;
      query = +i;
      drawHeadView();
      pickQuery.value = query;
      drawModelView();
    }
    layer.addEventListener('change', function () { headBoxes(); drawHeadView(); });
    // The model view: a row per block, a cell per head, the picked query's weights as bars.
    var pickQuery = mv.querySelector('.mv-query'), grid = mv.querySelector('.mv-grid');
    var firstRows = labels(all[0].group, 'rows');
    for (var i = 0; i < all[0].heads[0].S; ++i) pickQuery.add(new Option(i + ' ' + firstRows[i], i));
    pickQuery.value = query;
    pickQuery.addEventListener('change', function () { query = +pickQuery.value; drawModelView(); drawHeadView(); });
    function drawModelView() {
      var table = document.createElement('table');
      table.className = 'mv';
      all.forEach(function (b) {
        var tr = table.insertRow(), th = document.createElement('th');
        th.textContent = b.name;
        tr.appendChild(th);
        b.heads.forEach(function (head, h) {
          var canvas = document.createElement('canvas'), T = head.T, q = Math.min(query, head.S - 1);
          canvas.className = 'mv-cell';
          canvas.width = Math.max(48, Math.min(120, 3 * T));
          canvas.height = 30;
          canvas.title = head.title + ', ' + b.name;
          var ctx = canvas.getContext('2d'), w = weights(head.el), bar = canvas.width / T;
          for (var j = 0; j < T; ++j) {
            var v = w[q * T + j];
            if (v === MASKED) continue;
            ctx.fillStyle = hue(h);
            var height = Math.max(v / 10000 * 28, 0);
            ctx.fillRect(j * bar, 29 - height, Math.max(bar - (bar > 2 ? 1 : 0), 1), height);
          }
          canvas.addEventListener('mousemove', function (event) {
            var r = canvas.getBoundingClientRect(), j = Math.floor((event.clientX - r.left) / r.width * T);
            if (j < 0 || j >= T) return;
            mv.querySelector('.mv-readout').textContent = head.title + ', ' + b.name + ': query "' +
                labels(b.group, 'rows')[q] + '" (' + q + ') → key "' + labels(b.group, 'cols')[j] + '" (' + j + '): ' +
                weightText(w[q * T + j]);
          });
          tr.insertCell().appendChild(canvas);
        });
      });
      grid.textContent = '';
      grid.appendChild(table);
    }
    headBoxes();
    drawHeadView();
    drawModelView();
  }
  explorer();  // (last: the head colours above are set by then)
})();
)js";

}  // namespace

const char* canvas_style() { return kCanvasStyle; }
const char* canvas_script() { return kCanvasScript; }

}  // namespace attn
