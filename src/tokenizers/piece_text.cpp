#include "tokenizers/piece_text.h"

#include <cstdio>

namespace attn {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (std::size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size())
    text.replace(pos, from.size(), to);
  return text;
}

std::string clean_up_tokenization(std::string text) {
  static const char* const pairs[][2] = {{" .", "."},     {" ?", "?"},     {" !", "!"},   {" ,", ","},
                                         {" ' ", "'"},    {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"},
                                         {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& pair : pairs) text = replace_all(std::move(text), pair[0], pair[1]);
  return text;
}

std::string visible(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == ' ') {
      out += "\xE2\x90\xA3";  // ␣
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (byte < 0x20 || byte == 0x7F) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

std::string bytes_as_pieces(const std::string& bytes) {
  std::string out;
  for (const char c : bytes) {
    char spelled[8];
    std::snprintf(spelled, sizeof spelled, "<0x%02X>", static_cast<unsigned char>(c));
    out += spelled;
  }
  return out;
}

std::string display_metaspace_piece(const std::string& piece) {
  if (piece.size() == 6 && piece.compare(0, 3, "<0x") == 0) return piece;
  return visible(replace_all(piece, "\xE2\x96\x81", " "));  // ▁
}

}  // namespace attn
