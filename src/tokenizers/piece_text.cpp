#include "tokenizers/piece_text.h"

#include <cstdio>

#include "tokenizers/utf8.h"

namespace attn {

std::string clean_up_tokenization(std::string text) {
  static const char* const pairs[][2] = {{" .", "."},     {" ?", "?"},     {" !", "!"},   {" ,", ","},
                                         {" ' ", "'"},    {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"},
                                         {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& pair : pairs) text = replace_literal(text, pair[0], pair[1]);
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
  return visible(replace_literal(piece, "\xE2\x96\x81", " "));  // ▁
}

}  // namespace attn
