#include "model/byte_size.h"

#include <cstdint>

#include <fmt/format.h>

namespace attn {

std::string byte_size_text(double bytes, ByteStyle style) {
  const bool memory = style == ByteStyle::Memory;
  if (!memory && bytes < 1024) {
    const auto count = static_cast<std::uint64_t>(bytes);
    return fmt::format("{} byte{}", count, count == 1 ? "" : "s");
  }
  const char* const units[] = {"KiB", "MiB", "GiB", "TiB"};
  const std::size_t largest_unit = memory ? 2 : 3;
  // Dividing by 1024 is exact in binary, so the value is the same as bytes / 2^(10k).
  double value = bytes / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit < largest_unit) {
    value /= 1024.0;
    ++unit;
  }
  if (memory) return fmt::format("{:.1f} {}", value, units[unit]);
  const bool whole = value == static_cast<double>(static_cast<std::uint64_t>(value));
  return whole ? fmt::format("{:.0f} {}", value, units[unit]) : fmt::format("{:.1f} {}", value, units[unit]);
}

}  // namespace attn
