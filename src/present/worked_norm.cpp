// The worked rows of the norms: LayerNorm (mean, variance, normalized, scaled and shifted)
// and RMSNorm (root mean square, normalized, scaled), each one row of the layer's input.
// Declared in worked_arithmetic.h with the other worked steps.
#include "present/worked_arithmetic.h"

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "attn/error.h"
#include "present/terminal.h"
#include "present/worked_text.h"

namespace attn {

using namespace worked_text;

std::string worked_layer_norm_row(const std::vector<double>& x, const std::vector<double>& gamma,
                                  const std::vector<double>& beta, double eps, std::string_view row_name,
                                  const WorkedOptions& options) {
  if (x.empty() || gamma.size() != x.size() || beta.size() != x.size())
    throw InternalError(
        fmt::format("worked LayerNorm: a row of {} with {} gammas and {} betas", x.size(), gamma.size(), beta.size()));
  const int p = options.precision;
  const std::size_t m = options.max_terms;
  const double n = static_cast<double>(x.size());
  double total = 0;
  for (double v : x) total += v;
  const double mean = total / n;
  std::vector<double> centered, squares;
  double square_total = 0;
  for (double v : x) {
    centered.push_back(v - mean);
    squares.push_back((v - mean) * (v - mean));
    square_total += squares.back();
  }
  const double variance = square_total / n;  // biased: divided by N, as LayerNorm does
  const double denominator = std::sqrt(variance + eps);
  std::vector<double> normalized, output;
  for (double c : centered) normalized.push_back(c / denominator);
  for (std::size_t i = 0; i < x.size(); ++i) output.push_back(gamma[i] * normalized[i] + beta[i]);

  const auto xs = format_number_group(x, p), cs = format_number_group(centered, p);
  const auto qs = format_number_group(squares, p), ns = format_number_group(normalized, p);
  const std::string mean_text = format_worked_number(mean, p), variance_text = format_worked_number(variance, p);
  const std::string denominator_text = format_worked_number(denominator, p);
  const std::size_t count = x.size();

  std::string out = fmt::format("LayerNorm({}), {} = {}\n", row_name, row_name, bracketed(xs, m));
  const std::size_t width = display_width("√(var + eps)");
  out += labelled("mean", width,
                  fmt::format("({}) / {} = {} / {} = {}", sum_text(xs, m), count, format_worked_number(total, p), count,
                              mean_text));
  out += labelled("x - mean", width, bracketed(cs, m));
  out += labelled("(x - mean)²", width, bracketed(qs, m));
  out += labelled("variance", width,
                  fmt::format("({}) / {} = {} / {} = {}   (÷ N: biased)", sum_text(qs, m), count,
                              format_worked_number(square_total, p), count, variance_text));
  out += labelled("√(var + eps)", width, fmt::format("√({} + {:g}) = {}", variance_text, eps, denominator_text));
  out += labelled("x̂", width, fmt::format("(x - mean) / {} = {}", denominator_text, bracketed(ns, m)));

  bool identity = true;
  for (std::size_t i = 0; i < count; ++i)
    if (gamma[i] != 1 || beta[i] != 0) identity = false;
  if (identity) {
    out += labelled("γ·x̂ + β", width, "x̂   (γ = 1, β = 0)");
  } else {
    const auto gs = format_number_group(gamma, p), bs = format_number_group(beta, p);
    std::vector<std::string> terms;
    for (std::size_t i = 0; i < count; ++i) terms.push_back(factor(gs[i]) + "×" + factor(ns[i]) + signed_term(bs[i]));
    out += labelled("γ·x̂ + β", width, bracketed(terms, m) + " = " + bracketed(format_number_group(output, p), m));
  }
  return out;
}

namespace {
std::string rms_norm_row(const std::vector<double>& x, const std::vector<double>& gamma, double eps,
                         std::string_view row_name, const WorkedOptions& options, bool plus_one);
}  // namespace

std::string worked_rms_norm_row(const std::vector<double>& x, const std::vector<double>& gamma, double eps,
                                std::string_view row_name, const WorkedOptions& options) {
  return rms_norm_row(x, gamma, eps, row_name, options, false);
}

std::string worked_rms_norm_plus_one_row(const std::vector<double>& x, const std::vector<double>& gamma, double eps,
                                         std::string_view row_name, const WorkedOptions& options) {
  return rms_norm_row(x, gamma, eps, row_name, options, true);
}

namespace {

// RMSNorm's row, its gain gamma (or with plus_one 1 + gamma, Gemma's).
std::string rms_norm_row(const std::vector<double>& x, const std::vector<double>& gamma, double eps,
                         std::string_view row_name, const WorkedOptions& options, bool plus_one) {
  if (x.empty() || gamma.size() != x.size())
    throw InternalError(fmt::format("worked RMSNorm: a row of {} with {} gammas", x.size(), gamma.size()));
  const int p = options.precision;
  const std::size_t m = options.max_terms;
  const double n = static_cast<double>(x.size());
  std::vector<double> squares, normalized, output;
  double square_total = 0;
  for (double v : x) {
    squares.push_back(v * v);
    square_total += v * v;
  }
  const double mean_square = square_total / n;
  const double denominator = std::sqrt(mean_square + eps);
  for (double v : x) normalized.push_back(v / denominator);
  std::vector<double> gain = gamma;
  if (plus_one)
    for (double& g : gain) g = 1.0 + g;
  for (std::size_t i = 0; i < x.size(); ++i) output.push_back(gain[i] * normalized[i]);

  const auto xs = format_number_group(x, p), qs = format_number_group(squares, p);
  const auto ns = format_number_group(normalized, p);
  const std::string ms_text = format_worked_number(mean_square, p),
                    denominator_text = format_worked_number(denominator, p);
  const std::size_t count = x.size();
  std::string out = fmt::format("RMSNorm({}), {} = {}\n", row_name, row_name, bracketed(xs, m));
  const std::size_t width = display_width("√(mean(x²) + eps)");
  out += labelled("x²", width, bracketed(qs, m));
  out += labelled("mean(x²)", width,
                  fmt::format("({}) / {} = {} / {} = {}   (no mean subtracted)", sum_text(qs, m), count,
                              format_worked_number(square_total, p), count, ms_text));
  out += labelled("√(mean(x²) + eps)", width, fmt::format("√({} + {:g}) = {}", ms_text, eps, denominator_text));
  out += labelled("x̂", width, fmt::format("x / {} = {}", denominator_text, bracketed(ns, m)));
  bool identity = true;
  for (std::size_t i = 0; i < count; ++i)
    if (gain[i] != 1) identity = false;
  const char* label = plus_one ? "(1 + γ)·x̂" : "γ·x̂";
  if (plus_one) out += labelled("1 + γ", width, bracketed(format_number_group(gain, p), m));
  if (identity) {
    out += labelled(label, width, plus_one ? "x̂   (1 + γ = 1; no β)" : "x̂   (γ = 1; RMSNorm has no β)");
  } else {
    const auto gs = format_number_group(gain, p);
    std::vector<std::string> terms;
    for (std::size_t i = 0; i < count; ++i) terms.push_back(factor(gs[i]) + "×" + factor(ns[i]));
    out += labelled(label, width, bracketed(terms, m) + " = " + bracketed(format_number_group(output, p), m));
  }
  return out;
}

}  // namespace

}  // namespace attn
