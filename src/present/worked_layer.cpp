// Worked elements of the rest of a layer: the activation of the feed-forward network and the
// residual connection's sum (worked_arithmetic.h).
#include <cmath>

#include <fmt/format.h>

#include "attn/error.h"
#include "present/terminal.h"
#include "present/worked_arithmetic.h"

namespace attn {

namespace {

std::string bracketed(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "[" : ", ") + item;
  return out + "]";
}

}  // namespace

std::string worked_activation(double z, bool relu, std::string_view result_name, std::string_view input_name,
                              const WorkedOptions& options) {
  const int p = options.precision;
  const std::string zt = format_worked_number(z, p);
  const std::string factor = z < 0 ? "(" + zt + ")" : zt;
  if (relu)
    return fmt::format("{} = ReLU({}) = max(0, {}) = {}\n", result_name, input_name, zt,
                       format_worked_number(std::max(0.0, z), p));
  // GELU(z) = z · Φ(z), Φ(z) = (1 + erf(z / √2)) / 2, computed as the step does.
  const double phi = 0.5 * (1.0 + std::erf(z / std::sqrt(2.0)));
  return fmt::format("{} = GELU({}) = z · Φ(z) = {} × (1 + erf({} / √2)) / 2 = {} × {} = {}\n", result_name, input_name,
                     factor, factor, factor, format_worked_number(phi, p),
                     format_worked_number(0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))), p));
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
                     bracketed(format_number_group(left, p)), bracketed(format_number_group(right, p)), indent,
                     bracketed(format_number_group(sum, p)));
}

}  // namespace attn
