#include "html/html_page.h"

#include <fmt/format.h>

#include "html/html_canvas.h"
#include "html/html_document.h"
#include "html/html_tensor.h"
#include "html/html_text.h"
#include "present/model_overview.h"
#include "present/tensor_stats.h"

namespace attn {

namespace {

// "══ Encoder layer 0 of 1 (post-norm: ...) ══" -> "Encoder layer 0 of 1 (post-norm: ...)"
std::string inside_rules(const std::string& text) {
  std::string out = text;
  for (const char* rule : {"══ ", "── "})
    if (out.rfind(rule, 0) == 0) out.erase(0, std::string(rule).size());
  for (const char* rule : {" ══", " ──"}) {
    const std::string r = rule;
    if (out.size() >= r.size() && out.compare(out.size() - r.size(), r.size(), r) == 0)
      out.erase(out.size() - r.size());
  }
  return out;
}

// The words before the first `stop`: "Multi-head self-attention".
std::string first_words(const std::string& text, const char* stop) { return text.substr(0, text.find(stop)); }

}  // namespace

void HtmlPage::start_step(int number) {
  close_step();
  step_ = number;
  views_ = 0;
}

void HtmlPage::layer_header(const std::string& text) {
  // (a part after the steps, such as the induction lesson, is in no step: the last one ends)
  close_step();
  const std::string name = inside_rules(text);
  body_ += element("h2", "layer", name);
  // "Encoder layer 0 of 1", "Decoder-only (GPT-style) layer 0 of 2": up to the norm's
  // placement, which follows the layer's number (the stack's name may hold parentheses).
  const std::size_t number = name.find(" layer ");
  layer_ = name.substr(0, name.find(" (", number == std::string::npos ? 0 : number));
  block_.clear();
}

void HtmlPage::block_header(const std::string& text) {
  const std::string name = inside_rules(text);
  body_ += element("h3", "block", name);
  block_ = first_words(name, ",");
}

void HtmlPage::open_step(int number, const std::string& kind, const std::string& heading) {
  close_step();
  in_step_ = true;
  body_ += fmt::format("<section class=\"step\" id=\"step-{}\" data-kind=\"{}\">\n", number, escaped(kind)) +
           element("h4", "step-title", heading);
}

void HtmlPage::close_step() {
  unfold();
  if (in_step_) body_ += "</section>\n";
  in_step_ = false;
  repeat_ = false;
}

void HtmlPage::fold() {
  if (!repeat_ || folded_) return;
  body_ += "<details class=\"more\"><summary>its tensors and worked arithmetic</summary>\n";
  folded_ = true;
}

void HtmlPage::unfold() {
  if (folded_) body_ += "</details>\n";
  folded_ = false;
}

void HtmlPage::list_entry(int number, const std::string& kind, const std::string& title) {
  open_step(number, kind, fmt::format("Step {}: {}", number, title));
}

void HtmlPage::step_title(const StepTitle& title) {
  open_step(title.number, title.kind, fmt::format("Step {}: {}", title.number, title.title));
  // Where its explanation is, and the first step of its kind (often the same one).
  std::string refs;
  if (title.why_step && title.why_step != title.as_step)
    refs += fmt::format("why: <a href=\"#step-{0}\">step {0}</a>", title.why_step);
  if (title.as_step)
    refs += fmt::format("{0}first of its kind{1}: <a href=\"#step-{2}\">step {2}</a>", refs.empty() ? "" : " · ",
                        title.why_step == title.as_step ? ", with its why" : "", title.as_step);
  if (!refs.empty()) body_ += "<p class=\"refs\">" + refs + "</p>\n";
  repeat_ = title.as_step != 0;
}

void HtmlPage::explanation(const std::string& paragraph) { body_ += element("p", "why", paragraph); }

void HtmlPage::compact_step(int number, const std::string& formula, const std::string& shape, int as_step) {
  open_step(number, "", fmt::format("Step {}", number));
  body_ += fmt::format("<p class=\"formula\"><code>{}</code> → {} (as <a href=\"#step-{}\">step {}</a>)</p>\n",
                       formula_html(formula), escaped(shape), as_step, as_step);
}

void HtmlPage::formula(const std::string& formula, const std::string& shapes) {
  if (!formula.empty()) body_ += "<p class=\"formula\"><code>" + formula_html(formula) + "</code></p>\n";
  if (!shapes.empty()) body_ += "<p class=\"shapes\"><code>" + escaped(shapes) + "</code></p>\n";
}

void HtmlPage::line(const std::string& text) {
  fold();
  body_ += element("p", "line", text);
}

void HtmlPage::note(const std::string& text) {
  unfold();
  body_ += element("p", "note", "note: " + text);
}

void HtmlPage::indented(const std::string& text) {
  fold();
  body_ += "<pre class=\"indented\">" + preformatted(text) + "</pre>\n";
}

void HtmlPage::worked(const std::string& heading, const std::string& text) {
  fold();
  body_ += "<div class=\"worked\">" + element("p", "worked-title", heading) + "<pre>" + preformatted(text) +
           "</pre></div>\n";
}

void HtmlPage::raw(const std::string& text) {
  fold();
  body_ += "<pre class=\"raw\">" + preformatted(text) + "</pre>\n";
}

void HtmlPage::tensor(const ShownTensor& shown) {
  fold();
  const std::string stats =
      shown.stats ? format_tensor_stats(shown.tensor, shown.label.empty() ? "tensor" : shown.label) : "";
  body_ +=
      tensor_figure(shown, stats, options_.array, is_big_model(model_) ? kBigModelWholeTensorLimit : kWholeTensorLimit);
}

bool HtmlPage::vectors_together(const NamedTensors& vectors) {
  side_by_side(vectors);
  return true;
}

void HtmlPage::side_by_side(const NamedTensors& matrices) {
  fold();
  body_ += "<div class=\"side-by-side\">\n";
  for (const auto& [label, matrix] : matrices)
    body_ += tensor_figure({matrix, label, "", false, false, options_.array.threshold}, "", options_.array);
  body_ += "</div>\n";
}

void HtmlPage::labeled_vector(const std::string& label, const Tensor& row) {
  fold();
  body_ += tensor_figure({row, label, "", false, false, options_.array.threshold}, "", options_.array);
}

void HtmlPage::heatmap(const HeatmapView& view) {
  unfold();
  const std::string id = fmt::format("hm-{}-{}", step_, views_++);
  std::string name = layer_.empty() ? block_ : block_.empty() ? layer_ : layer_ + ", " + block_;
  if (view.batch_item) name += fmt::format(", batch item {}", *view.batch_item);
  const std::size_t S = view.heads.empty() ? 0 : view.heads[0].shape.at(0);
  const std::size_t T = view.heads.empty() ? 0 : view.heads[0].shape.at(1);
  const bool canvas = drawn_on_canvas(S, T, is_big_model(model_));
  // (an aside's map, the induction lesson's, is not one of the run's layers: no data for the views)
  const std::string data_name = view.in_overview ? (name.empty() ? "attention" : name) : "";
  body_ += canvas ? canvas_group(view, id, data_name) : heatmap_group(view, id, data_name);
  if (!view.in_overview) return;
  if (!canvas) {
    overview_.push_back({name, step_, id, view});
    return;
  }
  HeatmapView titles;  // the thumbnails are drawn from the maps: no second copy of the weights
  titles.titles = view.titles;
  overview_.push_back({name, step_, id, std::move(titles), true, S, T});
}

void HtmlPage::table(const std::string& caption, const Tensor& matrix, const std::vector<std::string>& row_labels,
                     const std::vector<std::string>& column_labels) {
  fold();
  body_ += labeled_matrix(caption, matrix, row_labels, column_labels, options_.array.precision);
}

void HtmlPage::top_k(const TopKView& view) {
  fold();
  body_ += top_k_table(view);
}

void HtmlPage::text_table(const TextTable& table) {
  unfold();
  body_ += word_table(table);
}

std::string HtmlPage::map_html(const std::vector<MapStage>& map) const {
  if (map.empty()) return "";
  std::string out = "<nav class=\"map\"><h2>The steps of this run, by stage</h2><ol>\n";
  for (const auto& stage : map) {
    const std::string range =
        stage.first == stage.last ? std::to_string(stage.first) : fmt::format("{}–{}", stage.first, stage.last);
    out += fmt::format("<li><a href=\"#step-{}\">steps {}</a> {}</li>\n", stage.first, range, escaped(stage.text));
  }
  return out + "</ol></nav>\n";
}

std::string HtmlPage::heading_html() const {
  const auto& c = model_.config;
  const std::string source = model_.source == "<default model>" ? "the built-in model" : model_.source;
  const std::string sizes = fmt::format(
      "d_model N={}, H={} head{} of d={}, d_ff F={}{}; {} encoder layer{}, {} decoder layer{}", c.d_model, c.num_heads,
      c.num_heads == 1 ? "" : "s", c.d_head, c.d_ff,
      model_.vocab.size() ? fmt::format(", vocabulary V={}", model_.vocab.size()) : "", model_.encoder.size(),
      model_.encoder.size() == 1 ? "" : "s", model_.decoder.size(), model_.decoder.size() == 1 ? "" : "s");
  return "<header>\n" + element("h1", "title", "Attention, step by step: " + info_.subject) +
         element("p", "run", info_.command + " · " + source + " · " + sizes) +
         element("p", "how",
                 "Every number below was computed by attn in float64, one step at a time. A kind of step met again "
                 "keeps its numbers folded: click to open them. Hover over a heatmap cell to read its query, key "
                 "and weight.") +
         "</header>\n";
}

void HtmlPage::finish(const std::vector<MapStage>& map) {
  close_step();
  map_ = map;
  if (!held_) write_document();
}

void HtmlPage::release() {
  if (!held_) return;
  held_ = false;
  close_step();
  write_document();
}

void HtmlPage::write_document() {
  LessonParts parts;
  parts.title = "attn: " + info_.subject;
  parts.header = heading_html();
  parts.map = map_html(map_);
  for (const auto& row : overview_) parts.heads = std::max(parts.heads, row.view.titles.size());
  if (!overview_.empty())
    parts.overview =
        "<section class=\"overview\" id=\"overview\"><h2>Attention at a glance: every layer and head</h2>\n" +
        element("p", "how",
                "Each small map is one head's attention weights: rows are queries, columns keys, "
                "brighter is more weight. Click one to go to its step.") +
        overview_table(overview_) + color_legend() +
        "<p class=\"readout\">hover over a cell for its query, key and weight</p>\n</section>\n" + attention_explorer();
  parts.body = std::move(body_);
  out_.write(lesson_document(parts));
}

}  // namespace attn
