#include "present/array_format.h"
#include "attn/error.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <stdexcept>

namespace attn {

namespace {

std::string to_chars_string(double value, std::chars_format format, int precision = -1) {
  char buf[400];
  const auto result = precision < 0 ? std::to_chars(buf, buf + sizeof buf, value, format)
                                    : std::to_chars(buf, buf + sizeof buf, value, format, precision);
  if (result.ec != std::errc()) throw InternalError("to_chars failed");
  return std::string(buf, result.ptr);
}

// Dragon4 in NumPy's "unique" mode with a cutoff: the shortest digits that round-trip, but
// never more than `precision` after the point (then the exact value is rounded, half to
// even). Trailing zeros trimmed, the point kept ("1.", "0.25").
std::string positional(double value, int precision) {
  std::string s = to_chars_string(value, std::chars_format::fixed);
  const auto dot = s.find('.');
  const std::size_t frac = dot == std::string::npos ? 0 : s.size() - dot - 1;
  if (static_cast<int>(frac) > precision) {
    s = to_chars_string(value, std::chars_format::fixed, precision);
    if (s.find('.') != std::string::npos) {
      while (s.back() == '0') s.pop_back();
    }
  }
  if (s.find('.') == std::string::npos) s += '.';
  return s;
}

// The same in scientific notation: mantissa digits, "e", sign and at least two exponent digits.
std::string scientific(double value, int precision) {
  std::string s = to_chars_string(value, std::chars_format::scientific);
  const auto e = s.find('e');
  const auto dot = s.find('.');
  const std::size_t frac = dot == std::string::npos || dot > e ? 0 : e - dot - 1;
  if (static_cast<int>(frac) > precision) s = to_chars_string(value, std::chars_format::scientific, precision);
  std::string mantissa = s.substr(0, s.find('e'));
  std::string exponent = s.substr(s.find('e') + 1);
  if (mantissa.find('.') != std::string::npos)
    while (mantissa.back() == '0') mantissa.pop_back();
  if (mantissa.find('.') == std::string::npos) mantissa += '.';
  return mantissa + "e" + exponent;
}

}  // namespace

FloatFormatter::FloatFormatter(const double* values, std::size_t count, int precision, bool suppress_small)
    : precision_(precision) {
  std::vector<double> finite;
  for (std::size_t i = 0; i < count; ++i)
    if (std::isfinite(values[i])) finite.push_back(values[i]);
  double max_abs = 0, min_abs = INFINITY;
  bool any_nonzero = false;
  for (double v : finite)
    if (v != 0) {
      any_nonzero = true;
      max_abs = std::max(max_abs, std::fabs(v));
      min_abs = std::min(min_abs, std::fabs(v));
    }
  if (any_nonzero) exp_format_ = max_abs >= 1e8 || (!suppress_small && (min_abs < 1e-4 || max_abs / min_abs > 1000.0));

  if (finite.empty()) {
    pad_left_ = pad_right_ = 0;
    exp_size_ = -1;
    min_digits_ = 0;
  } else if (exp_format_) {
    int frac_max = 0, int_max = 0, exp_max = 0;
    for (double v : finite) {
      const std::string s = scientific(v, precision_);
      const auto e = s.find('e'), dot = s.find('.');
      int_max = std::max(int_max, static_cast<int>(dot));
      frac_max = std::max(frac_max, static_cast<int>(e - dot - 1));
      exp_max = std::max(exp_max, static_cast<int>(s.size() - e - 1));
    }
    exp_size_ = exp_max - 1;
    precision_ = frac_max;
    min_digits_ = frac_max;
    pad_left_ = int_max;
    pad_right_ = exp_size_ + 2 + precision_;
  } else {
    int frac_max = 0, int_max = 0;
    for (double v : finite) {
      const std::string s = positional(v, precision_);
      const auto dot = s.find('.');
      int_max = std::max(int_max, static_cast<int>(dot));
      frac_max = std::max(frac_max, static_cast<int>(s.size() - dot - 1));
    }
    pad_left_ = int_max;
    pad_right_ = frac_max;
    min_digits_ = 0;
  }
  if (finite.size() != count) {
    bool negative_inf = false;
    for (std::size_t i = 0; i < count; ++i)
      if (std::isinf(values[i]) && values[i] < 0) negative_inf = true;
    const int offset = pad_right_ + 1;
    pad_left_ = std::max({pad_left_, 3 - offset, 3 + (negative_inf ? 1 : 0) - offset});
  }
}

std::string FloatFormatter::operator()(double value) const {
  if (!std::isfinite(value)) {
    const std::string text = std::isnan(value) ? "nan" : (value < 0 ? "-inf" : "inf");
    const int width = pad_left_ + pad_right_ + 1;
    return std::string(std::max(0, width - static_cast<int>(text.size())), ' ') + text;
  }
  if (exp_format_) {
    std::string s = scientific(value, precision_);
    auto e = s.find('e');
    auto dot = s.find('.');
    // min_digits: pad the mantissa's fraction with zeros to `precision_` digits.
    std::string int_part = s.substr(0, dot);
    std::string frac_part = s.substr(dot + 1, e - dot - 1);
    frac_part.append(std::max(0, min_digits_ - static_cast<int>(frac_part.size())), '0');
    std::string exponent = s.substr(e + 1);  // sign and digits
    std::string digits = exponent.substr(1);
    if (static_cast<int>(digits.size()) < exp_size_) digits.insert(0, exp_size_ - digits.size(), '0');
    return std::string(std::max(0, pad_left_ - static_cast<int>(int_part.size())), ' ') + int_part + "." + frac_part +
           "e" + exponent[0] + digits;
  }
  const std::string s = positional(value, precision_);
  const auto dot = s.find('.');
  const std::string int_part = s.substr(0, dot);
  const std::string frac_part = s.substr(dot + 1);
  return std::string(std::max(0, pad_left_ - static_cast<int>(int_part.size())), ' ') + int_part + "." + frac_part +
         std::string(std::max(0, pad_right_ - static_cast<int>(frac_part.size())), ' ');
}

std::string format_number(double value, int precision) { return FloatFormatter(&value, 1, precision, true)(value); }

// Indices kept along an axis of size n when summarizing: all, or the first and last `edge`.
std::vector<std::size_t> shown_indices(std::size_t n, bool summarize, std::size_t edge) {
  std::vector<std::size_t> idx;
  if (summarize && n > 2 * edge) {
    for (std::size_t i = 0; i < edge; ++i) idx.push_back(i);
    for (std::size_t i = n - edge; i < n; ++i) idx.push_back(i);
  } else {
    for (std::size_t i = 0; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

namespace {

void collect_shown(const Tensor& t, std::size_t axis, std::size_t offset, bool summarize, std::size_t edge,
                   std::vector<double>& out) {
  if (axis == t.rank()) {
    out.push_back(t.data[offset]);
    return;
  }
  std::size_t stride = 1;
  for (std::size_t i = axis + 1; i < t.rank(); ++i) stride *= t.shape[i];
  for (std::size_t i : shown_indices(t.shape[axis], summarize, edge))
    collect_shown(t, axis + 1, offset + i * stride, summarize, edge, out);
}

std::string rstrip(const std::string& s) {
  std::size_t end = s.size();
  while (end > 0 && s[end - 1] == ' ') --end;
  return s.substr(0, end);
}

// numpy's _extendLine: wrap before `word` when the line would grow past `width`, unless
// wrapping would not help (the line holds only the indent).
void extend_line(std::string& s, std::string& line, const std::string& word, std::size_t width,
                 const std::string& next_line_prefix) {
  bool needs_wrap = line.size() + word.size() > width;
  if (line.size() <= next_line_prefix.size()) needs_wrap = false;
  if (needs_wrap) {
    s += rstrip(line) + "\n";
    line = next_line_prefix;
  }
  line += word;
}

}  // namespace

std::vector<double> shown_values(const Tensor& tensor, const ArrayFormatOptions& options) {
  std::vector<double> shown;
  collect_shown(tensor, 0, 0, tensor.size() > options.threshold, options.edge_items, shown);
  return shown;
}

std::string format_array(const Tensor& tensor, const ArrayFormatOptions& options, std::size_t prefix_width) {
  const bool summarize = tensor.size() > options.threshold;
  const std::size_t edge = options.edge_items;
  const std::vector<double> shown = shown_values(tensor, options);

  std::function<std::string(double)> format_value;
  if (options.integers) {
    std::size_t width = 0;
    for (double v : shown) width = std::max(width, std::to_string(static_cast<long long>(v)).size());
    format_value = [width](double v) {
      std::string s = std::to_string(static_cast<long long>(v));
      return std::string(width - std::min(width, s.size()), ' ') + s;
    };
  } else {
    FloatFormatter formatter(shown, options.precision, options.suppress_small);
    format_value = formatter;
  }
  if (tensor.rank() == 0) return format_value(tensor.data.empty() ? 0.0 : tensor.data[0]);

  const std::string separator = " ";
  const std::string summary_insert = summarize ? "..." : "";
  std::vector<std::size_t> strides(tensor.rank(), 1);
  for (std::size_t i = tensor.rank(); i-- > 1;) strides[i - 1] = strides[i] * tensor.shape[i];

  // numpy's _formatArray, recursing over axes.
  std::function<std::string(std::size_t, std::size_t, const std::string&, std::size_t)> recurse =
      [&](std::size_t axis, std::size_t offset, const std::string& hanging_indent, std::size_t width) -> std::string {
    const std::size_t axes_left = tensor.rank() - axis;
    const std::string next_indent = hanging_indent + " ";
    const std::size_t next_width = width - 1;
    const std::size_t n = tensor.shape[axis];
    const bool show_summary = summarize && 2 * edge < n;
    const std::size_t leading = show_summary ? edge : 0;
    const std::size_t trailing = show_summary ? edge : n;
    std::string s;
    if (axes_left == 1) {
      const std::size_t elem_width = width - 1;  // room for "]"
      std::string line = hanging_indent;
      for (std::size_t i = 0; i < leading; ++i) {
        extend_line(s, line, format_value(tensor.data[offset + i * strides[axis]]), elem_width, hanging_indent);
        line += separator;
      }
      if (show_summary) {
        extend_line(s, line, summary_insert, elem_width, hanging_indent);
        line += separator;
      }
      for (std::size_t i = trailing; i > 1; --i) {
        extend_line(s, line, format_value(tensor.data[offset + (n - i) * strides[axis]]), elem_width, hanging_indent);
        line += separator;
      }
      extend_line(s, line, format_value(tensor.data[offset + (n - 1) * strides[axis]]), elem_width, hanging_indent);
      s += line;
    } else {
      const std::string line_sep = rstrip(separator) + std::string(axes_left - 1, '\n');
      for (std::size_t i = 0; i < leading; ++i)
        s += hanging_indent + recurse(axis + 1, offset + i * strides[axis], next_indent, next_width) + line_sep;
      if (show_summary) s += hanging_indent + summary_insert + line_sep;
      for (std::size_t i = trailing; i > 1; --i)
        s += hanging_indent + recurse(axis + 1, offset + (n - i) * strides[axis], next_indent, next_width) + line_sep;
      s += hanging_indent + recurse(axis + 1, offset + (n - 1) * strides[axis], next_indent, next_width);
    }
    return "[" + s.substr(hanging_indent.size()) + "]";
  };
  if (tensor.size() == 0) return "[]";
  return recurse(0, 0, std::string(1 + prefix_width, ' '), options.line_width);
}

}  // namespace attn
