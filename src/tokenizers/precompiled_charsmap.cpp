#include "tokenizers/precompiled_charsmap.h"

#include <algorithm>

#include "attn/error.h"
#include "tokenizers/unicode_text.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

// Standard base64 with padding (Rust's BASE64_STANDARD); false on anything else.
bool decode_base64(const std::string& text, std::string& out) {
  if (text.size() % 4 != 0) return false;
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  out.clear();
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int padding = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    std::uint32_t group = 0;
    for (int k = 0; k < 4; ++k) {
      const int v = k >= 4 - padding ? 0 : value(text[i + static_cast<std::size_t>(k)]);
      if (v < 0) return false;
      group = (group << 6) | static_cast<std::uint32_t>(v);
    }
    if (padding == 1 && text[i + 2] == '=') return false;
    for (int k = 0; k < 3 - padding; ++k) out += static_cast<char>((group >> (16 - 8 * k)) & 0xFF);
  }
  return true;
}

}  // namespace

PrecompiledCharsmap::PrecompiledCharsmap(const std::string& base64, const std::string& file, const std::string& path) {
  std::string blob;
  if (!decode_base64(base64, blob)) throw InputError(file, path, "expected base64 text, found other characters");
  if (!split_charsmap(blob, units_, strings_))
    throw InputError(file, path,
                     "expected a normalization table (a uint32 size, a trie of that many bytes, its strings), "
                     "found " +
                         std::to_string(blob.size()) + " bytes that are not one");
  if (first_invalid_utf8(strings_))
    throw InputError(file, path, "expected the table's strings in UTF-8, found other bytes");
  if (const auto problem = unsafe_darts_trie(units_, strings_, false))
    throw InputError(file, path, "expected a table whose trie stays inside itself, found " + *problem);
}

// spm_precompiled's transform: the value of the first leaf a common-prefix search meets
// (the shortest entry the chunk starts with), read up to its NUL byte.
std::optional<std::string_view> PrecompiledCharsmap::transform(std::string_view chunk) const {
  std::size_t node = units_[0].offset();
  for (const char byte : chunk) {
    const auto c = static_cast<unsigned char>(byte);
    if (c == 0) break;
    node ^= c;
    const DartsUnit unit = units_[node];
    if (unit.label() != c) return std::nullopt;
    node ^= unit.offset();
    if (unit.has_leaf()) {
      const std::size_t begin = units_[node].value();
      const std::size_t end = std::min(strings_.find('\0', begin), strings_.size());
      return std::string_view(strings_).substr(begin, end - begin);
    }
  }
  return std::nullopt;
}

std::string PrecompiledCharsmap::normalize(const std::string& text) const {
  std::string out;
  out.reserve(text.size());
  std::size_t begin = 0;
  for (const std::size_t end : grapheme_ends(text)) {
    const std::string_view grapheme = std::string_view(text).substr(begin, end - begin);
    begin = end;
    if (grapheme.size() < 6) {
      if (const auto mapped = transform(grapheme)) {
        out += *mapped;
        continue;
      }
    }
    for (std::size_t pos = 0; pos < grapheme.size();) {
      const std::size_t length =
          utf8_sequence_length(text, static_cast<std::size_t>(grapheme.data() - text.data()) + pos);
      const std::string_view character = grapheme.substr(pos, length == 0 ? 1 : length);
      const auto mapped = transform(character);
      out += mapped ? *mapped : character;
      pos += character.size();
    }
  }
  return out;
}

std::size_t PrecompiledCharsmap::longest_replacement() const {
  std::size_t longest = 1;
  for (std::size_t begin = 0; begin < strings_.size();) {
    const std::size_t end = std::min(strings_.find('\0', begin), strings_.size());
    longest = std::max(longest, end - begin);
    begin = end + 1;
  }
  return longest;
}

}  // namespace attn
