// The worked arithmetic of attn patch --site and attn attribute, and the answer's line per
// layer of attn explain --lens --answer.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "present/experiment_report.h"
#include "present/terminal.h"

namespace attn {

namespace {

// "[0.1234, -0.5678, 0.9012, …, 0.3456]" (its first three numbers and its last).
std::string preview(const Tensor& t, int precision) {
  const std::size_t n = t.data.size();
  std::string text = "[";
  for (std::size_t i = 0; i < n; ++i) {
    if (n > 5 && i == 3) {
      text += "…, ";
      i = n - 1;
    }
    text += fmt::format("{:.{}f}{}", t.data[i], precision, i + 1 < n ? ", " : "");
  }
  return text + "]";
}

std::string shape_text(const Tensor& t) { return shape_with_axes(t); }

// "logit("f") = h · W_U["f"] + b = (h0)(w0) + (h1)(w1) + (h2)(w2) + … + (h63)(w63) + b = v"
std::string logit_line(const std::string& token, const Tensor& h, const Tensor& w, double bias, double logit,
                       int precision) {
  const std::size_t N = h.data.size();
  std::string terms;
  for (std::size_t n = 0; n < N; ++n) {
    if (N > 5 && n == 3) {
      terms += " + …";
      n = N - 1;
    }
    terms += fmt::format("{}({:.{}f})({:.{}f})", n ? " + " : "", h.data[n], precision, w.data[n], precision);
  }
  const std::string b = bias != 0 ? fmt::format(" + {:.{}f}", bias, precision) : "";
  return fmt::format("logit(\"{}\") = h · W_U[\"{}\"]{} = {}{} = {:.{}f}   ({} terms)", token, token,
                     bias != 0 ? " + b" : "", terms, b, logit, precision, N);
}

std::string signed_text(double v, int precision) {
  return v < 0 ? fmt::format("({:.{}f})", v, precision) : fmt::format("{:.{}f}", v, precision);
}

// Every line of `text` wrapped to the lesson's width (75, NumPy's), continued under its " = ".
std::string wrapped_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    out += wrapped(text.substr(start, end - start), 75) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string site_arithmetic(const Model& model, const PatchResult& result, int precision) {
  const SiteDetail& d = *result.detail;
  const bool head = d.site.kind == SiteKind::Head;
  std::string text = fmt::format("site {}: the entry {}, {} {}\n", site_label(d.site, result.stacks.size() > 1),
                                 d.address, head ? "head" : "row", d.site.index);
  text += fmt::format("  corrupted run: {} {}\n", preview(d.corrupt, precision), shape_text(d.corrupt));
  text += fmt::format("  clean run:     {} {}\n", preview(d.clean, precision), shape_text(d.clean));
  text += fmt::format(
      "the corrupted run again with {} replaced by the clean run's, from layer {} on; at the last "
      "position the output head reads\n",
      head ? "that head's context" : "that row", d.site.layer);
  text += fmt::format("  h = {} {}\n", preview(d.hidden, precision), shape_text(d.hidden));
  const std::string answer = readable_token(model, result.metric.answer);
  text += "  " + logit_line(answer, d.hidden, d.answer_column, d.answer_bias, d.answer_logit, precision) + "\n";
  if (result.metric.wrong) {
    const std::string wrong = readable_token(model, *result.metric.wrong);
    text += "  " + logit_line(wrong, d.hidden, d.wrong_column, d.wrong_bias, d.wrong_logit, precision) + "\n";
    text += fmt::format("  m = {:.{}f} - {} = {:.{}f}\n", d.answer_logit, precision,
                        signed_text(d.wrong_logit, precision), d.value, precision);
  } else {
    text += fmt::format("  m = {:.{}f}\n", d.value, precision);
  }
  text += fmt::format(
      "  normalised effect = (m - m_corrupt) / (m_clean - m_corrupt) = ({:.{}f} - {}) / ({:.{}f} - "
      "{}) = {:.{}f}\n",
      d.value, precision, signed_text(result.corrupt, precision), result.clean, precision,
      signed_text(result.corrupt, precision), normalised_effect(d.value, result.clean, result.corrupt), precision);
  return wrapped_lines(text);
}

void print_attribution(std::ostream& out, const Model& model, const Attribution& a, const Metric& metric,
                       const ReportStyle& style) {
  const int p = style.precision;
  std::string tokens;
  for (const auto& t : a.tokens) tokens += (tokens.empty() ? "" : " ") + readable_token(model, t);
  const std::string answer = readable_token(model, metric.answer);
  const std::string u = metric.wrong
                            ? fmt::format("W_U[\"{}\"] - W_U[\"{}\"]", answer, readable_token(model, *metric.wrong))
                            : fmt::format("W_U[\"{}\"]", answer);
  out << fmt::format("attn attribute: {}, {} tokens: {}\n", style.model_name, a.tokens.size(), tokens);
  const std::string logits =
      metric.wrong ? fmt::format("logit(\"{}\") - logit(\"{}\")", answer, readable_token(model, *metric.wrong))
                   : fmt::format("logit(\"{}\")", answer);
  out << fmt::format("metric m = {} at the last position (after \"{}\") = {:.{}f}\n", logits,
                     a.tokens.empty() ? "" : readable_token(model, a.tokens.back()), a.total, p);
  out << fmt::format("u = {}; the final norm's scale frozen at the whole residual's: {} = {:.{}f}\n", u,
                     a.rms ? "1 / rms" : "1 / sigma", a.scale, p);
  const char* gain = model.config.norm == Norm::RMSNormPlusOne ? "(1 + gamma)" : "gamma";  // Gemma's gain
  out << fmt::format("each component c: {} · u\n\n",
                     a.rms ? fmt::format("(c * scale * {})", gain) : fmt::format("((c - mean c) * scale * {})", gain));
  std::size_t width = 4;
  for (const auto& c : a.components) width = std::max(width, c.name.size());
  for (const auto& c : a.components) out << fmt::format("  {:<{}}  {:>{}.{}f}\n", c.name, width, c.value, p + 6, p);
  // the sum, worked: every component, then the total the model's logits give
  double sum = 0;
  std::string terms;
  for (const auto& c : a.components) {
    sum += c.value;
    terms += (terms.empty() ? "" : " + ") + signed_text(c.value, p);
  }
  out << "\nthe sum of the components:\n";
  out << wrapped("  m = " + terms, 100) << "\n";
  out << fmt::format("    = {:.{}f}   (the model's own logits give {:.{}f}; difference {:.1e})\n", sum, p + 6, a.total,
                     p + 6, sum - a.total);
}

std::string attribution_json(const Attribution& a, const Metric& metric) {
  nlohmann::ordered_json doc;
  doc["metric"] = metric.name();
  doc["total"] = a.total;
  doc["components"] = nlohmann::ordered_json::array();
  for (const auto& c : a.components) doc["components"].push_back({{"name", c.name}, {"value", c.value}});
  return doc.dump() + "\n";
}

std::vector<std::string> answer_lines(const std::vector<LayerAnswer>& answers, const std::string& answer) {
  std::vector<std::string> lines;
  for (const LayerAnswer& a : answers)
    lines.push_back(fmt::format("after layer {}: \"{}\" rank {}, logit {:.4f}, p {:.4f}", a.layer, answer, a.rank,
                                a.logit, a.probability));
  return lines;
}

}  // namespace attn
