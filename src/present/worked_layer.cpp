// Worked elements of the rest of a layer: the activation of the feed-forward network and the
// residual connection's sum (worked_arithmetic.h).
#include <cmath>

#include <fmt/format.h>

#include "attn/error.h"
#include "present/print_limits.h"
#include "present/terminal.h"
#include "present/worked_arithmetic.h"

namespace attn {

namespace {

// "[a, b, c]"; past kWorkedRowWhole numbers (a big model's rows of 768), the first
// max_terms - 1, "…" and the last, as the other worked elements shorten theirs.
std::string bracketed(const std::vector<std::string>& items, std::size_t max_terms) {
  const bool elided = items.size() > kWorkedRowWhole && max_terms >= 2;
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (elided && i + 1 == max_terms) {
      out += ", …";
      i = items.size() - 1;
    }
    out += (out.empty() ? "[" : ", ") + items[i];
  }
  return out + "]";
}

}  // namespace

std::string worked_activation(double z, Activation activation, std::string_view result_name,
                              std::string_view input_name, const WorkedOptions& options) {
  const int p = options.precision;
  const std::string zt = format_worked_number(z, p);
  const std::string factor = z < 0 ? "(" + zt + ")" : zt;
  if (activation == Activation::GELUTanh) {
    // 0.5 z (1 + tanh(√(2/π) (z + 0.044715 z³))), computed as the step does.
    const double inner = std::sqrt(2.0 / 3.14159265358979323846) * (z + 0.044715 * z * z * z);
    return fmt::format(
        "{} = GELU_tanh({}) = 0.5 · z · (1 + tanh(√(2/π) · (z + 0.044715 · z³)))\n{}= 0.5 × {} × (1 + "
        "tanh({})) = {}\n",
        result_name, input_name, std::string(display_width(result_name) + 1, ' '), factor,
        format_worked_number(inner, p), format_worked_number(0.5 * z * (1.0 + std::tanh(inner)), p));
  }
  if (activation == Activation::ReLU)
    return fmt::format("{} = ReLU({}) = max(0, {}) = {}\n", result_name, input_name, zt,
                       format_worked_number(std::max(0.0, z), p));
  if (activation == Activation::SiLU || activation == Activation::SwiGLU)  // z / (1 + e^-z), as the step does
    return fmt::format("{} = SiLU({}) = z / (1 + e^-z) = {} / (1 + e^{}) = {}\n", result_name, input_name, factor,
                       format_worked_number(-z, p), format_worked_number(z / (1.0 + std::exp(-z)), p));
  // GELU(z) = z · Φ(z), Φ(z) = (1 + erf(z / √2)) / 2, computed as the step does.
  const double phi = 0.5 * (1.0 + std::erf(z / std::sqrt(2.0)));
  return fmt::format("{} = GELU({}) = z · Φ(z) = {} × (1 + erf({} / √2)) / 2 = {} × {} = {}\n", result_name, input_name,
                     factor, factor, factor, format_worked_number(phi, p),
                     format_worked_number(0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))), p));
}

std::string worked_swiglu(double gate, double up, std::string_view result_name, std::string_view gate_name,
                          std::string_view up_name, const WorkedOptions& options) {
  const int p = options.precision;
  const auto paren = [](const std::string& t) { return !t.empty() && t[0] == '-' ? "(" + t + ")" : t; };
  const std::string a = paren(format_worked_number(gate, p)), u = paren(format_worked_number(up, p));
  const double silu = gate / (1.0 + std::exp(-gate));
  return fmt::format("{} = SiLU({}) · {} = a / (1 + e^-a) · u = {} / (1 + e^-{}) × {} = {} × {} = {}\n", result_name,
                     gate_name, up_name, a, a, u, format_worked_number(silu, p), u, format_worked_number(silu * up, p));
}

std::string worked_geglu(double gate, double up, std::string_view result_name, std::string_view gate_name,
                         std::string_view up_name, const WorkedOptions& options) {
  const int p = options.precision;
  const auto paren = [](const std::string& t) { return !t.empty() && t[0] == '-' ? "(" + t + ")" : t; };
  const std::string a = paren(format_worked_number(gate, p)), u = paren(format_worked_number(up, p));
  // 0.5 a (1 + tanh(√(2/π) (a + 0.044715 a³))), computed as the step does
  const double pi = std::acos(-1.0);
  const double gelu = 0.5 * gate * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (gate + 0.044715 * gate * gate * gate)));
  return fmt::format(
      "{} = GELU_tanh({}) · {} = 0.5 · a · (1 + tanh(√(2/π) · (a + 0.044715 · a³))) · u = GELU_tanh({}) × {} = {} × "
      "{} = {}\n",
      result_name, gate_name, up_name, a, u, format_worked_number(gelu, p), u, format_worked_number(gelu * up, p));
}

RopeAngle worked_rope_angle(std::size_t position, std::size_t pair, std::size_t d_head, double theta,
                            const WorkedOptions& options) {
  const int p = options.precision;
  const double inv_freq = 1.0 / std::pow(theta, static_cast<double>(2 * pair) / static_cast<double>(d_head));
  const double angle = static_cast<double>(position) * inv_freq;
  RopeAngle a{std::cos(angle), std::sin(angle), ""};
  a.text = fmt::format("position {}, pair ({}, {}): angle = {} × {:g}^(-{}/{}) = {} × {} = {}\n", position, pair,
                       pair + d_head / 2, position, theta, 2 * pair, d_head, position,
                       format_worked_number(inv_freq, p), format_worked_number(angle, p));
  a.text += fmt::format("cos = {}, sin = {}\n", format_worked_number(a.cos, p), format_worked_number(a.sin, p));
  return a;
}

std::string worked_llama3_frequency(std::size_t pair, std::size_t d_head, double theta, const RopeScaling& s,
                                    double adjusted, const WorkedOptions& options) {
  const int p = options.precision;
  const double f = 1.0 / std::pow(theta, static_cast<double>(2 * pair) / static_cast<double>(d_head));
  const double wavelength = 2 * std::acos(-1.0) / f, L = s.original_max_position_embeddings;
  std::string out =
      fmt::format("pair ({}, {}): f = {:g}^(-{}/{}) = {}, wavelength λ = 2π / f = {}\n", pair, pair + d_head / 2, theta,
                  2 * pair, d_head, format_worked_number(f, p), format_worked_number(wavelength, p));
  if (wavelength < L / s.high_freq_factor)
    return out + fmt::format("λ < L / high_freq_factor = {:g}: a fast pair, kept: inv_freq = {}\n",
                             L / s.high_freq_factor, format_worked_number(adjusted, p));
  if (wavelength > L / s.low_freq_factor)
    return out + fmt::format("λ > L / low_freq_factor = {:g}: a slow pair, f / factor = {} / {:g} = {}\n",
                             L / s.low_freq_factor, format_worked_number(f, p), s.factor,
                             format_worked_number(adjusted, p));
  const double smooth = (L / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  out += fmt::format("between {:g} and {:g}: s = (L / λ - {:g}) / ({:g} - {:g}) = {}\n", L / s.high_freq_factor,
                     L / s.low_freq_factor, s.low_freq_factor, s.high_freq_factor, s.low_freq_factor,
                     format_worked_number(smooth, p));
  return out + fmt::format("inv_freq = (1 - s)·f / {:g} + s·f = {}\n", s.factor, format_worked_number(adjusted, p));
}

std::string worked_rope_pair(double first, double second, std::size_t position, std::size_t pair, std::size_t d_head,
                             double theta, const RopeNames& names, const WorkedOptions& options) {
  const int p = options.precision;
  const std::size_t other = pair + d_head / 2;
  const auto paren = [](const std::string& t) { return !t.empty() && t[0] == '-' ? "(" + t + ")" : t; };
  const RopeAngle angle = worked_rope_angle(position, pair, d_head, theta, options);
  const double c = angle.cos, s = angle.sin;
  const std::string a = paren(format_worked_number(first, p)), b = paren(format_worked_number(second, p));
  const std::string ct = paren(format_worked_number(c, p)), st = paren(format_worked_number(s, p));
  std::string out = angle.text;
  out += fmt::format("{}[{}] = {}[{}]·cos - {}[{}]·sin = {}×{} - {}×{} = {}\n", names.result, pair, names.input, pair,
                     names.input, other, a, ct, b, st, format_worked_number(first * c - second * s, p));
  out += fmt::format("{}[{}] = {}[{}]·cos + {}[{}]·sin = {}×{} + {}×{} = {}\n", names.result, other, names.input, other,
                     names.input, pair, b, ct, a, st, format_worked_number(second * c + first * s, p));
  return out;
}

std::string worked_sum_row(const std::vector<double>& left, const std::vector<double>& right,
                           std::string_view result_name, std::string_view left_name, std::string_view right_name,
                           const WorkedOptions& options) {
  if (left.empty() || left.size() != right.size())
    throw InternalError(fmt::format("worked sum: rows of {} and {} values", left.size(), right.size()));
  std::vector<double> sum;
  for (std::size_t i = 0; i < left.size(); ++i) sum.push_back(left[i] + right[i]);
  const int p = options.precision;
  const std::string indent(display_width(result_name) + 1, ' ');
  return fmt::format("{} = {} + {}\n{}= {} + {}\n{}= {}\n", result_name, left_name, right_name, indent,
                     bracketed(format_number_group(left, p), options.max_terms),
                     bracketed(format_number_group(right, p), options.max_terms), indent,
                     bracketed(format_number_group(sum, p), options.max_terms));
}

}  // namespace attn
