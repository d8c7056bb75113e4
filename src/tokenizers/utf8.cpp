#include "tokenizers/utf8.h"

namespace attn {

namespace {

bool in_range(unsigned char byte, unsigned char low, unsigned char high) { return byte >= low && byte <= high; }

// How many bytes past the lead byte at text[pos] continue a well-formed sequence, and how
// many it needs: the maximal subpart is 1 + matched bytes when matched < needed.
struct SequenceCheck {
  std::size_t needed = 0;   // continuation bytes the lead byte calls for
  std::size_t matched = 0;  // of those, how many are present and in range
  bool lead_valid = false;
};

SequenceCheck check_sequence(const std::string& text, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  SequenceCheck check;
  // The allowed range of the first continuation byte depends on the lead byte (table 3-7).
  unsigned char first_low = 0x80, first_high = 0xBF;
  if (lead < 0x80) {
    check.lead_valid = true;
    return check;
  } else if (in_range(lead, 0xC2, 0xDF)) {
    check.needed = 1;
  } else if (in_range(lead, 0xE0, 0xEF)) {
    check.needed = 2;
    if (lead == 0xE0) first_low = 0xA0;
    if (lead == 0xED) first_high = 0x9F;
  } else if (in_range(lead, 0xF0, 0xF4)) {
    check.needed = 3;
    if (lead == 0xF0) first_low = 0x90;
    if (lead == 0xF4) first_high = 0x8F;
  } else {
    return check;
  }
  check.lead_valid = true;
  for (std::size_t i = 1; i <= check.needed && pos + i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[pos + i]);
    const bool ok = i == 1 ? in_range(byte, first_low, first_high) : in_range(byte, 0x80, 0xBF);
    if (!ok) break;
    ++check.matched;
  }
  return check;
}

}  // namespace

std::size_t utf8_sequence_length(const std::string& text, std::size_t pos) {
  if (pos >= text.size()) return 0;
  const SequenceCheck check = check_sequence(text, pos);
  if (!check.lead_valid || check.matched < check.needed) return 0;
  return 1 + check.needed;
}

std::optional<std::size_t> first_invalid_utf8(const std::string& text) {
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t length = utf8_sequence_length(text, pos);
    if (length == 0) return pos;
    pos += length;
  }
  return std::nullopt;
}

std::string utf8_lossy(const std::string& bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t pos = 0; pos < bytes.size();) {
    const SequenceCheck check = check_sequence(bytes, pos);
    if (check.lead_valid && check.matched == check.needed) {
      out.append(bytes, pos, 1 + check.needed);
      pos += 1 + check.needed;
    } else {
      out += "\xEF\xBF\xBD";
      pos += check.lead_valid ? 1 + check.matched : 1;
    }
  }
  return out;
}

char32_t utf8_code_point(const std::string& text, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const std::size_t length = utf8_sequence_length(text, pos);
  if (length <= 1) return lead;
  char32_t value = lead & (0x7F >> length);
  for (std::size_t i = 1; i < length; ++i) value = (value << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  return value;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::vector<std::string> utf8_characters(const std::string& text) {
  std::vector<std::string> characters;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t length = utf8_sequence_length(text, pos);
    if (length == 0) length = 1;  // callers pass well-formed text; never loop forever
    characters.push_back(text.substr(pos, length));
    pos += length;
  }
  return characters;
}

bool is_unicode_whitespace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string replace_literal(const std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  std::string out;
  std::size_t pos = 0;
  for (std::size_t found; (found = text.find(from, pos)) != std::string::npos; pos = found + from.size()) {
    out.append(text, pos, found - pos);
    out += to;
  }
  out.append(text, pos, std::string::npos);
  return out;
}

}  // namespace attn
