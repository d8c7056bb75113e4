#include "present/probability_text.h"

#include <cmath>

#include <fmt/format.h>

namespace attn {

std::string probability_text(double p, int decimals) {
  // The smallest value that rounds to a digit that is not zero at `decimals`: 0.005 at 2.
  const double shown = 0.5 * std::pow(10.0, -decimals);
  if (p == 0 || std::abs(p) >= shown || !std::isfinite(p)) return fmt::format("{:.{}f}", p, decimals);
  return fmt::format("{:.2g}", p);  // 0.0012, 3.4e-07 (printf's %g: exponent below 1e-4)
}

}  // namespace attn
