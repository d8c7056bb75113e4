#include "present/worked_arithmetic.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "attn/error.h"
#include "present/terminal.h"
#include "present/worked_text.h"

namespace attn {

namespace {

std::string fixed_chars(double value, int digits) {
  char buf[400];
  const auto result = digits < 0 ? std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed)
                                 : std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, digits);
  if (result.ec != std::errc()) throw InternalError("to_chars failed");
  return std::string(buf, result.ptr);
}

// Digits after the point NumPy's unique mode prints for `value` with at most `precision`
// of them: the shortest round-trip digits, or the value rounded to `precision` digits with
// trailing zeros dropped (0.99995 at precision 4 is "1.", no digits).
int fraction_digits(double value, int precision) {
  std::string s = fixed_chars(value, -1);
  auto dot = s.find('.');
  int digits = dot == std::string::npos ? 0 : static_cast<int>(s.size() - dot - 1);
  if (digits <= precision) return digits;
  s = fixed_chars(value, precision);
  dot = s.find('.');
  if (dot == std::string::npos) return 0;
  while (s.back() == '0') s.pop_back();
  return static_cast<int>(s.size() - dot - 1);
}

std::string non_finite_text(double value) { return std::isnan(value) ? "nan" : (value < 0 ? "-inf" : "inf"); }

}  // namespace

namespace worked_text {

// A marker for the elided middle of a long list.
constexpr std::size_t kEllipsis = std::numeric_limits<std::size_t>::max();

// The indices shown of a list of n: all, or the first max_terms - 1, kEllipsis, the last.
std::vector<std::size_t> shown(std::size_t n, std::size_t max_terms) {
  std::vector<std::size_t> indices;
  if (max_terms < 2 || n <= max_terms) {
    for (std::size_t i = 0; i < n; ++i) indices.push_back(i);
    return indices;
  }
  for (std::size_t i = 0; i + 1 < max_terms; ++i) indices.push_back(i);
  indices.push_back(kEllipsis);
  indices.push_back(n - 1);
  return indices;
}

// "[a, b, …, z]"
std::string bracketed(const std::vector<std::string>& items, std::size_t max_terms) {
  std::string out = "[";
  bool first = true;
  for (std::size_t i : shown(items.size(), max_terms)) {
    out += (first ? "" : ", ") + (i == kEllipsis ? std::string("…") : items[i]);
    first = false;
  }
  return out + "]";
}

// " + t", or " - |t|" when t is negative: a term added after others.
std::string signed_term(const std::string& text) {
  return !text.empty() && text[0] == '-' ? " - " + text.substr(1) : " + " + text;
}

// "a + b - c + … + z": a negative term after the first is subtracted.
std::string sum_text(const std::vector<std::string>& terms, std::size_t max_terms) {
  std::string out;
  bool first = true;
  for (std::size_t i : shown(terms.size(), max_terms)) {
    if (i == kEllipsis) {
      out += " + …";
    } else {
      out += first ? terms[i] : signed_term(terms[i]);
    }
    first = false;
  }
  return out;
}

// "a×b + c×d + …" with the given separator between shown items.
std::string joined(const std::vector<std::string>& items, std::string_view separator, std::size_t max_terms) {
  std::string out;
  bool first = true;
  for (std::size_t i : shown(items.size(), max_terms)) {
    out += (first ? "" : std::string(separator)) + (i == kEllipsis ? std::string("…") : items[i]);
    first = false;
  }
  return out;
}

// A factor in a product: negative numbers in brackets, "1.34×(-0.5)".
std::string factor(const std::string& text) { return !text.empty() && text[0] == '-' ? "(" + text + ")" : text; }

}  // namespace worked_text

using namespace worked_text;

namespace {

std::string elision_note(std::size_t n, std::size_t max_terms) {
  return n > max_terms && max_terms >= 2 ? fmt::format("   ({} terms, {} not shown)", n, n - max_terms) : "";
}

}  // namespace

namespace worked_text {

std::string chain(const std::vector<std::string>& steps) {
  std::string out;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (i > 0 && steps[i] == steps[i - 1]) continue;
    if (!out.empty()) out += " = ";
    out += steps[i];
  }
  return out;
}

std::string labelled(const std::string& label, std::size_t width, const std::string& text) {
  return "  " + pad_right(label, width) + " = " + text + "\n";
}

}  // namespace worked_text

namespace {

std::vector<double> row_of(const Tensor& t, std::size_t row) {
  const std::size_t columns = t.dim(1);
  return std::vector<double>(t.data.begin() + static_cast<std::ptrdiff_t>(row * columns),
                             t.data.begin() + static_cast<std::ptrdiff_t>((row + 1) * columns));
}

void require_matrix(const Tensor& t, const char* what) {
  if (t.rank() != 2)
    throw InternalError(fmt::format("worked arithmetic: {} must be 2-D, got shape {}", what, shape_string(t.shape)));
}

}  // namespace

namespace {

// A value too small for `precision` digits after the point to show it (fewer than two
// significant digits: 8.8e-05 would print as 0.0001, 1e-07 as 0): it prints with two
// significant digits instead, so that no 0 is shown that is not 0.
bool too_small_for_fixed(double value, int precision) {
  if (value == 0 || !std::isfinite(value)) return false;
  const std::string s = fixed_chars(std::abs(value), precision);
  const std::size_t first = s.find_first_not_of("0.");
  return first == std::string::npos || s.size() - first - (s.find('.', first) == std::string::npos ? 0 : 1) < 2;
}

// Two significant digits, as Python's "%.2g" writes them: 8.8e-05, 0.00031.
std::string significant_chars(double value) { return fmt::format("{:.2g}", value); }

}  // namespace

std::vector<std::string> format_number_group(const std::vector<double>& values, int precision) {
  int digits = 0;
  for (double v : values)
    if (std::isfinite(v) && !too_small_for_fixed(v, precision))
      digits = std::max(digits, fraction_digits(v, precision));
  std::vector<std::string> out;
  for (double v : values) {
    if (!std::isfinite(v)) {
      out.push_back(non_finite_text(v));
      continue;
    }
    if (too_small_for_fixed(v, precision)) {
      out.push_back(significant_chars(v));
      continue;
    }
    std::string s = fixed_chars(v == 0 ? 0.0 : v, digits);
    // A value that rounds to zero prints without its sign ("0.00", not "-0.00").
    if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
    out.push_back(s);
  }
  return out;
}

std::string format_worked_number(double value, int precision) { return format_number_group({value}, precision)[0]; }

std::vector<std::string> format_fixed_group(const std::vector<double>& values, int precision) {
  std::vector<std::string> out;
  for (double v : values) {
    if (!std::isfinite(v)) {
      out.push_back(non_finite_text(v));
      continue;
    }
    std::string s = fixed_chars(v == 0 ? 0.0 : v, precision);
    // A weight that rounds to 0 but is not 0 keeps its significant digits (never "0.0000").
    if (v != 0 && s.find_first_not_of("-0.") == std::string::npos) s = significant_chars(v);
    out.push_back(s);
  }
  return out;
}

std::string worked_dot_product(const DotProductNames& names, const std::vector<double>& left,
                               const std::vector<double>& right, std::optional<double> bias,
                               const WorkedOptions& options) {
  if (left.empty() || left.size() != right.size())
    throw InternalError(fmt::format("worked dot product: vectors of length {} and {}", left.size(), right.size()));
  const int p = options.precision;
  std::vector<double> products;
  double sum = 0;
  for (std::size_t i = 0; i < left.size(); ++i) {
    products.push_back(left[i] * right[i]);
    sum += products.back();
  }
  if (bias) sum += *bias;

  const auto l = format_number_group(left, p), r = format_number_group(right, p);
  std::vector<std::string> factors, terms = format_number_group(products, p);
  for (std::size_t i = 0; i < left.size(); ++i) factors.push_back(factor(l[i]) + "×" + factor(r[i]));
  std::string factor_line = joined(factors, " + ", options.max_terms);
  std::string term_line = sum_text(terms, options.max_terms);
  if (bias) {
    const std::string b = format_worked_number(*bias, p);
    factor_line += signed_term(b);
    term_line += signed_term(b);
  }

  const std::string head = names.result + " = ";
  const std::string indent = std::string(display_width(names.result) + 1, ' ') + "= ";
  std::string out = head;
  if (!names.left.empty()) {
    out += names.left + " · " + names.right + (bias && !names.bias.empty() ? " + " + names.bias : "") + "\n" + indent;
  }
  out += factor_line + elision_note(left.size(), options.max_terms) + "\n";
  out += indent + term_line + "\n";
  out += indent + format_worked_number(sum, p) + "\n";
  return out;
}

std::string worked_projection_cell(const Tensor& x, const Tensor& w, const Tensor& bias, std::size_t row,
                                   std::size_t column, std::string_view result_name, std::string_view input_name,
                                   std::string_view weight_name, std::string_view bias_name,
                                   const WorkedOptions& options) {
  require_matrix(x, "the input");
  require_matrix(w, "the weight");
  if (x.dim(1) != w.dim(0) || row >= x.dim(0) || column >= w.dim(1) || (bias.size() && bias.size() != w.dim(1)))
    throw InternalError(fmt::format("worked projection: cell [{}][{}] of {} @ {} (bias {})", row, column,
                                    shape_string(x.shape), shape_string(w.shape), shape_string(bias.shape)));
  std::vector<double> weight_column;
  for (std::size_t k = 0; k < w.dim(0); ++k) weight_column.push_back(w.at({k, column}));  // widened if stored
  DotProductNames names;
  names.result = fmt::format("{}[{}][{}]", result_name, row, column);
  names.left = fmt::format("{}[{}]", input_name, row);
  names.right = fmt::format("{}[:,{}]", weight_name, column);
  names.bias = fmt::format("{}[{}]", bias_name, column);
  std::optional<double> b;
  if (bias.size()) b = bias.data[column];
  return worked_dot_product(names, row_of(x, row), weight_column, b, options);
}

std::string worked_score_cell(const Tensor& q, const Tensor& k, std::size_t i, std::size_t j,
                              std::string_view result_name, std::string_view query_name, std::string_view key_name,
                              const WorkedOptions& options) {
  require_matrix(q, "the queries");
  require_matrix(k, "the keys");
  if (q.dim(1) != k.dim(1) || i >= q.dim(0) || j >= k.dim(0))
    throw InternalError(fmt::format("worked score: cell [{}][{}] of queries {} and keys {}", i, j,
                                    shape_string(q.shape), shape_string(k.shape)));
  DotProductNames names;
  names.result = fmt::format("{}[{}][{}]", result_name, i, j);
  names.left = fmt::format("{}[{}]", query_name, i);
  names.right = fmt::format("{}[{}]", key_name, j);
  return worked_dot_product(names, row_of(q, i), row_of(k, j), std::nullopt, options);
}

std::string worked_scaling(double score, std::size_t d_head, std::string_view score_name, std::string_view result_name,
                           const WorkedOptions& options) {
  const int p = options.precision;
  const double root = std::sqrt(static_cast<double>(d_head));
  const std::string s = format_worked_number(score, p);
  return fmt::format("{} = {} / √d = {} / √{} = {} / {} = {}\n", result_name, score_name, s, d_head, s,
                     format_worked_number(root, p), format_worked_number(score / root, p));
}

std::string worked_softmax_row(const std::vector<double>& row, std::string_view row_name, std::string_view result_name,
                               const WorkedOptions& options) {
  if (row.empty()) throw InternalError("worked softmax: empty row");
  const int p = options.precision;
  const std::size_t m = options.max_terms;
  const auto x = format_number_group(row, p);
  std::string out = fmt::format("{} = softmax({}), {} = {}\n", result_name, row_name, row_name, bracketed(x, m));

  const double max = *std::max_element(row.begin(), row.end(), [](double a, double b) {
    return std::isnan(b) ? false : (std::isnan(a) ? true : a < b);
  });
  if (std::isinf(max) && max < 0) {
    out += "  Every entry is -inf: every key is masked, so there is no weight to share out.\n";
    out += "  attn gives such a row all-zero weights and warns about it.\n";
    return out;
  }

  std::vector<double> shifted, exps;
  double sum = 0;
  for (double v : row) {
    shifted.push_back(v - max);
    exps.push_back(std::exp(v - max));
    sum += exps.back();
  }
  std::vector<double> weights;
  for (double e : exps) weights.push_back(e / sum);

  // The maximum is one of the entries, so it prints the way the row does.
  std::string max_text;
  for (std::size_t i = 0; i < row.size(); ++i)
    if (row[i] == max) max_text = x[i];
  // Powers, their sum and the weights keep `precision` digits in every row, as the weights
  // do (maxprec would print e = [1, 0.5] as [1.0, 0.5] and another row's with four digits).
  const auto d = format_number_group(shifted, p), e = format_fixed_group(exps, p);
  const std::string s = format_fixed_group({sum}, p)[0];
  std::vector<std::string> differences, powers, quotients;
  for (std::size_t i = 0; i < row.size(); ++i) {
    differences.push_back(x[i] + " - " + factor(max_text));
    powers.push_back("e^" + d[i]);
    quotients.push_back(e[i] + " / " + s);
  }

  const std::string result(result_name);
  const std::size_t width = std::max(display_width("e^(x - max)"), display_width(result));
  out += labelled("max", width, max_text);
  out += labelled("x - max", width, bracketed(differences, m) + " = " + bracketed(d, m));
  out += labelled("e^(x - max)", width, bracketed(powers, m) + " = " + bracketed(e, m));
  out += labelled("sum", width, chain({sum_text(e, m), s}));
  out += labelled(result, width, bracketed(quotients, m) + " = " + bracketed(format_fixed_group(weights, p), m));
  return out;
}

std::string worked_context_row(const std::vector<double>& weights, const Tensor& values, const ContextNames& names,
                               const WorkedOptions& options) {
  require_matrix(values, "the values");
  if (weights.size() != values.dim(0) || weights.empty() ||
      (!names.keys.empty() && names.keys.size() != weights.size()))
    throw InternalError(fmt::format("worked context: {} weights for values {} ({} key names)", weights.size(),
                                    shape_string(values.shape), names.keys.size()));
  const int p = options.precision;
  const std::size_t m = options.max_terms;
  const std::size_t keys = values.dim(0), dims = values.dim(1);
  const auto w = format_number_group(weights, p);
  const auto v = format_number_group(to_vector(values.data), p);
  const auto value_name = [&](std::size_t j) {
    return fmt::format("{}[{}]", names.values, names.keys.empty() ? std::to_string(j) : names.keys[j]);
  };
  const auto value_row = [&](std::size_t j) {
    return bracketed(std::vector<std::string>(v.begin() + static_cast<std::ptrdiff_t>(j * dims),
                                              v.begin() + static_cast<std::ptrdiff_t>((j + 1) * dims)),
                     m);
  };

  const std::string indent(display_width(names.result) + 1, ' ');
  std::vector<std::string> weighted_names;
  for (std::size_t j = 0; j < keys; ++j) weighted_names.push_back(factor(w[j]) + "×" + value_name(j));
  std::string out = names.result + " = " + joined(weighted_names, " + ", m) + "\n";
  bool first = true;
  for (std::size_t j : shown(keys, m)) {
    if (j == kEllipsis)
      out += indent + "+ …\n";
    else
      out += indent + (first ? "= " : "+ ") + factor(w[j]) + "×" + value_row(j) + "\n";
    first = false;
  }

  for (std::size_t c : shown(dims, m)) {
    if (c == kEllipsis) {
      out += "  …\n";
      continue;
    }
    std::vector<double> products;
    std::vector<std::string> factors;
    for (std::size_t j = 0; j < keys; ++j) {
      products.push_back(weights[j] * values.data[j * dims + c]);
      factors.push_back(factor(w[j]) + "×" + factor(v[j * dims + c]));
    }
    double sum = 0;
    for (double x : products) sum += x;
    out += fmt::format("  dim {}: {}\n", c,
                       chain({joined(factors, " + ", m), sum_text(format_number_group(products, p), m),
                              format_worked_number(sum, p)}));
  }
  std::vector<double> context(dims, 0.0);  // summed in the same order as the lines above
  for (std::size_t c = 0; c < dims; ++c)
    for (std::size_t j = 0; j < keys; ++j) context[c] += weights[j] * values.data[j * dims + c];
  out += names.result + " = " + bracketed(format_number_group(context, p), m) + "\n";
  return out;
}

double sinusoidal_positional_encoding(std::size_t position, std::size_t dimension, std::size_t d_model) {
  const std::size_t pair = dimension / 2;
  const double exponent = static_cast<double>(2 * pair) / static_cast<double>(d_model);
  const double angle = static_cast<double>(position) / std::pow(10000.0, exponent);
  return dimension % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

std::string worked_positional_encoding(std::size_t position, std::size_t dimension, std::size_t d_model,
                                       const WorkedOptions& options) {
  if (d_model == 0 || dimension >= d_model)
    throw InternalError(fmt::format("worked positional encoding: dimension {} of d_model {}", dimension, d_model));
  const int p = options.precision;
  const std::size_t pair = dimension / 2;
  const bool even = dimension % 2 == 0;
  const double exponent = static_cast<double>(2 * pair) / static_cast<double>(d_model);
  const double divisor = std::pow(10000.0, exponent);
  const double angle = static_cast<double>(position) / divisor;
  const double value = even ? std::sin(angle) : std::cos(angle);
  const std::string angle_text = format_worked_number(angle, p);
  const std::string name = fmt::format("PE({}, {})", position, dimension);

  std::string out = fmt::format("{}: dimension {} is {}, so {}; i = {} ({} and {} share an angle)\n", name, dimension,
                                even ? "even" : "odd", even ? "sin" : "cos", pair, 2 * pair, 2 * pair + 1);
  const std::size_t width = std::max(display_width("divisor"), display_width(name));
  out += labelled("divisor", width,
                  fmt::format("10000^(2i/d_model) = 10000^(2×{}/{}) = 10000^{} = {}", pair, d_model,
                              format_worked_number(exponent, p), format_worked_number(divisor, p)));
  out += labelled("angle", width,
                  fmt::format("pos / divisor = {} / {} = {}", position, format_worked_number(divisor, p), angle_text));
  out += labelled(name, width,
                  fmt::format("{}({}) = {}", even ? "sin" : "cos", angle_text, format_worked_number(value, p)));
  return out;
}

std::string worked_positional_encoding_row(std::size_t position, std::size_t d_model, const WorkedOptions& options) {
  std::string out;
  std::vector<double> row;
  for (std::size_t dim = 0; dim < d_model; ++dim) row.push_back(sinusoidal_positional_encoding(position, dim, d_model));
  for (std::size_t dim : shown(d_model, options.max_terms)) {
    if (dim == kEllipsis)
      out += "…\n";
    else
      out += worked_positional_encoding(position, dim, d_model, options);
  }
  out +=
      fmt::format("PE({}) = {}\n", position, bracketed(format_number_group(row, options.precision), options.max_terms));
  return out;
}

}  // namespace attn
