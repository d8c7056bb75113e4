#include "core/text.h"

#include <fmt/format.h>

namespace attn {

// The length of the well-formed UTF-8 sequence at text[i], or 0 when it is not one
// (a stray continuation byte, a cut-off sequence, an overlong or surrogate form).
std::size_t utf8_length(const std::string& text, std::size_t i, char32_t* code) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  std::size_t n = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xe ? 3 : (b0 >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  char32_t c = n == 1 ? b0 : n == 2 ? (b0 & 0x1f) : n == 3 ? (b0 & 0x0f) : (b0 & 0x07);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    c = (c << 6) | (byte(i + k) & 0x3f);
  }
  static const char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kSmallest[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  *code = c;
  return n;
}

// Characters a terminal acts on instead of showing: C0 and C1 controls, DEL, and the
// marks that reorder text (a right-to-left override can make a message say the opposite).
bool is_hidden_control(char32_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e) ||
         (c >= 0x2066 && c <= 0x2069);
}

std::optional<std::string> unprintable_part(const std::string& text, bool whitespace_allowed) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const std::size_t n = utf8_length(text, i, &c);
    if (n == 0)
      return fmt::format("the byte 0x{:02x} at byte {}, which is not UTF-8", static_cast<unsigned char>(text[i]), i);
    const bool whitespace = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (is_hidden_control(c) && !(whitespace && whitespace_allowed))
      return fmt::format("the control character U+{:04X} at byte {}", static_cast<unsigned>(c), i);
    i += n;
  }
  return std::nullopt;
}

}  // namespace attn
