#include "present/worked_backward.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attn/error.h"
#include "present/terminal.h"
#include "present/worked_text.h"

namespace attn {

using namespace worked_text;

std::string worked_softmax_backward_row(const std::vector<double>& w, const std::vector<double>& dw,
                                        std::string_view result_name, const WorkedOptions& options) {
  if (w.empty() || w.size() != dw.size()) throw InternalError("worked softmax backward: rows of different lengths");
  const int p = options.precision;
  const std::size_t m = options.max_terms;
  double dot = 0;
  std::vector<double> products, centred, result;
  for (std::size_t j = 0; j < w.size(); ++j) {
    products.push_back(dw[j] * w[j]);
    dot += products.back();
  }
  for (std::size_t j = 0; j < w.size(); ++j) {
    centred.push_back(dw[j] - dot);
    result.push_back(w[j] * centred.back());
  }
  const auto ws = format_number_group(w, p), ds = format_number_group(dw, p), cs = format_number_group(centred, p);
  const std::string dots = format_worked_number(dot, p);
  std::vector<std::string> factors, differences, terms;
  for (std::size_t j = 0; j < w.size(); ++j) {
    factors.push_back(factor(ds[j]) + "×" + factor(ws[j]));
    differences.push_back(ds[j] + " - " + factor(dots));
    terms.push_back(ws[j] + "×" + factor(cs[j]));
  }
  const std::string name(result_name);
  const std::size_t width = std::max(display_width("dw - Σ"), display_width(name));
  std::string out = fmt::format("{} = w ⊙ (dw - Σ_j dw_j·w_j), w the weights, dw = dL/dw\n", name);
  out += labelled("w", width, bracketed(ws, m));
  out += labelled("dw", width, bracketed(ds, m));
  out += labelled("Σ", width, chain({joined(factors, " + ", m), sum_text(format_number_group(products, p), m), dots}));
  out += labelled("dw - Σ", width, bracketed(differences, m) + " = " + bracketed(cs, m));
  out += labelled(name, width, bracketed(terms, m) + " = " + bracketed(format_number_group(result, p), m));
  // One line per paragraph: the page wraps it at the terminal's width.
  out +=
      "  Why: raising one score raises its weight and lowers all the others (they still sum to 1), "
      "so each score's gradient is its weight times how much its dL/dw beats the average Σ.\n";
  if (dot == 0 && std::all_of(w.begin(), w.end(), [](double v) { return v == 0; }))
    out += "  Every weight is 0 (every key masked): the row passes no gradient back.\n";
  return out;
}

std::string worked_cross_entropy(const std::vector<LossPosition>& positions, double loss,
                                 const WorkedOptions& options) {
  const int p = options.precision;
  std::size_t width = 0;
  for (const auto& pos : positions) width = std::max(width, display_width(pos.where));
  std::string out;
  std::vector<std::string> terms;
  for (const auto& pos : positions) {
    if (pos.ignored) {
      out += "  " + pad_right(pos.where, width) + fmt::format("  label \"{}\": ignored\n", pos.label);
      continue;
    }
    const std::string nll = format_worked_number(-std::log(pos.probability), p);
    terms.push_back(nll);
    out +=
        "  " + pad_right(pos.where, width) +
        fmt::format("  label \"{}\": p = {}, -log p = {}\n", pos.label, format_worked_number(pos.probability, p), nll);
  }
  out += fmt::format("  L = ({}) / {} = {}\n", sum_text(terms, options.max_terms), terms.size(),
                     format_worked_number(loss, p));
  return out;
}

std::string worked_cross_entropy_gradient_row(const std::vector<double>& probabilities, std::size_t label,
                                              std::string_view label_token, std::size_t n, std::string_view result_name,
                                              const WorkedOptions& options) {
  if (label >= probabilities.size() || probabilities.size() < 2)
    throw InternalError("worked cross-entropy gradient: label out of range");
  const int p = options.precision;
  std::vector<double> result;
  for (std::size_t j = 0; j < probabilities.size(); ++j)
    result.push_back((probabilities[j] - (j == label ? 1.0 : 0.0)) / static_cast<double>(n));
  const std::size_t other = label == 0 ? 1 : 0;
  const std::string name(result_name);
  std::string out =
      fmt::format("{} = (p - onehot(label)) / n, label \"{}\" (id {}), n = {}\n", name, label_token, label, n);
  out += fmt::format("  at the label:  (p[{0}] - 1) / n = ({1} - 1) / {2} = {3}\n", label,
                     format_worked_number(probabilities[label], p), n, format_worked_number(result[label], p));
  out += fmt::format("  elsewhere:     p[j] / n, as p[{0}] / n = {1} / {2} = {3}\n", other,
                     format_worked_number(probabilities[other], p), n, format_worked_number(result[other], p));
  out += fmt::format("  {} = {}\n", name, bracketed(format_number_group(result, p), options.max_terms));
  out +=
      "  Why: raising the label's logit raises its probability, which lowers the loss; raising any "
      "other logit takes probability from the label, which raises it.\n";
  return out;
}

std::string worked_rope_pair_backward(double first, double second, std::size_t position, std::size_t pair,
                                      std::size_t d_head, double theta, const RopeNames& names,
                                      const WorkedOptions& options) {
  const int p = options.precision;
  const std::size_t other = pair + d_head / 2;
  const RopeAngle angle = worked_rope_angle(position, pair, d_head, theta, options);
  const double c = angle.cos, s = angle.sin;
  const std::string a = factor(format_worked_number(first, p)), b = factor(format_worked_number(second, p));
  const std::string ct = factor(format_worked_number(c, p)), st = factor(format_worked_number(s, p));
  std::string out = angle.text;
  out += fmt::format("{}[{}] = {}[{}]·cos + {}[{}]·sin = {}×{} + {}×{} = {}\n", names.result, pair, names.input, pair,
                     names.input, other, a, ct, b, st, format_worked_number(first * c + second * s, p));
  out += fmt::format("{}[{}] = {}[{}]·cos - {}[{}]·sin = {}×{} - {}×{} = {}\n", names.result, other, names.input, other,
                     names.input, pair, b, ct, a, st, format_worked_number(second * c - first * s, p));
  out +=
      "  Why: the forward turned the pair by the angle; its gradient goes back "
      "through the transposed rotation, a turn by minus the angle.\n";
  return out;
}

std::string worked_repeat_kv_backward(const std::vector<double>& terms, const std::vector<std::string>& term_names,
                                      std::string_view result_name, std::string_view shared_by,
                                      const WorkedOptions& options) {
  if (terms.empty() || terms.size() != term_names.size())
    throw InternalError("worked repeat_kv backward: a value per name expected");
  double sum = 0;
  for (const double t : terms) sum += t;
  const std::vector<std::string> values = format_number_group(terms, options.precision);
  std::string out = fmt::format("{} = {}\n", result_name, joined(term_names, " + ", options.max_terms));
  out += fmt::format("{}= {} = {}\n", std::string(display_width(result_name) + 1, ' '),
                     sum_text(values, options.max_terms), format_worked_number(sum, options.precision));
  out += fmt::format(
      "  Why: {} each read a copy of this head, so each copy's gradient comes back to it, and they "
      "add up.\n",
      shared_by);
  return out;
}

}  // namespace attn
