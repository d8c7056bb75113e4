// Decoders (tokenizers/src/decoders/): the pieces of the ids back to text.
#include <array>

#include "tokenizers/text_steps.h"
#include "tokenizers/utf8.h"

namespace attn {

namespace {

// bytes_to_unicode() of GPT-2's encoder.py: bytes '!'..'~', '¡'..'¬' and '®'..'ÿ' stand
// for the character of the same number; the other 68 for U+0100, U+0101, ... in order.
struct ByteLevelTable {
  std::array<std::string, 256> characters;
  std::array<char32_t, 256> code_points{};
  ByteLevelTable() {
    char32_t next = 256;
    for (unsigned byte = 0; byte < 256; ++byte) {
      const bool printable = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
      code_points[byte] = printable ? static_cast<char32_t>(byte) : next++;
      append_utf8(characters[byte], code_points[byte]);
    }
  }
  // The byte a character stands for, or -1.
  int byte_of(char32_t c) const {
    if (c < 256) {
      const bool printable = (c >= 0x21 && c <= 0x7E) || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE;
      if (printable) return static_cast<int>(c);
    }
    for (unsigned byte = 0; byte < 256; ++byte)
      if (code_points[byte] == c) return static_cast<int>(byte);
    return -1;
  }
};

const ByteLevelTable& table() {
  static const ByteLevelTable instance;
  return instance;
}

// ByteLevel's decode_chain: every piece's bytes (a piece with a character outside the
// table, such as an added token holding a space, as its own UTF-8), then one lossy UTF-8
// conversion of them all.
std::vector<std::string> byte_level(const std::vector<std::string>& pieces) {
  std::string bytes;
  for (const std::string& piece : pieces) {
    std::string piece_bytes;
    bytes += byte_level_bytes(piece, piece_bytes) ? piece_bytes : piece;
  }
  return {utf8_lossy(bytes)};
}

int fallback_byte(const std::string& piece) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
  int value = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = piece[static_cast<std::size_t>(i)];
    const int digit = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                             : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// ByteFallback's decode_chain: runs of <0xNN> pieces become their bytes when those are
// UTF-8, else one U+FFFD per byte (byte_fallback.rs does exactly this).
std::vector<std::string> byte_fallback(const std::vector<std::string>& pieces) {
  std::vector<std::string> out;
  std::string pending;
  std::size_t pending_count = 0;
  const auto flush = [&] {
    if (pending_count == 0) return;
    if (first_invalid_utf8(pending)) {
      for (std::size_t i = 0; i < pending_count; ++i) out.emplace_back("\xEF\xBF\xBD");
    } else {
      out.push_back(pending);
    }
    pending.clear();
    pending_count = 0;
  };
  for (const std::string& piece : pieces) {
    const int byte = fallback_byte(piece);
    if (byte >= 0) {
      pending += static_cast<char>(byte);
      ++pending_count;
    } else {
      flush();
      out.push_back(piece);
    }
  }
  flush();
  return out;
}

// Strip's decode_chain: up to `start` copies of the character off the front of each
// piece, up to `stop` off its end.
std::vector<std::string> strip(const DecoderStep& step, std::vector<std::string> pieces) {
  for (std::string& piece : pieces) {
    std::size_t begin = 0, end = piece.size();
    for (std::size_t i = 0; i < step.start && piece.compare(begin, step.content.size(), step.content) == 0; ++i)
      begin += step.content.size();
    for (std::size_t i = 0; i < step.stop && end >= begin + step.content.size() &&
                            piece.compare(end - step.content.size(), step.content.size(), step.content) == 0;
         ++i)
      end -= step.content.size();
    piece = piece.substr(begin, end - begin);
  }
  return pieces;
}

// Metaspace's decode_chain: the replacement becomes a space, except in the first piece,
// where every one is dropped (metaspace.rs: `i == 0 && prepend_scheme != Never`).
std::vector<std::string> metaspace(const DecoderStep& step, std::vector<std::string> pieces) {
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    pieces[i] = replace_literal(pieces[i], step.replacement, i == 0 && step.drop_first_replacement ? "" : " ");
  }
  return pieces;
}

}  // namespace

const std::string& byte_level_character(unsigned char byte) { return table().characters[byte]; }

bool byte_level_bytes(const std::string& piece, std::string& bytes) {
  bytes.clear();
  for (std::size_t pos = 0; pos < piece.size();) {
    const std::size_t length = utf8_sequence_length(piece, pos);
    if (length == 0) return false;
    const int byte = table().byte_of(utf8_code_point(piece, pos));
    if (byte < 0) return false;
    bytes += static_cast<char>(byte);
    pos += length;
  }
  return true;
}

std::string decode_pieces(const std::vector<DecoderStep>& steps, std::vector<std::string> pieces) {
  if (steps.empty()) {
    std::string joined;
    for (std::size_t i = 0; i < pieces.size(); ++i) joined += (i ? " " : "") + pieces[i];
    return joined;
  }
  for (const DecoderStep& step : steps) {
    switch (step.kind) {
      case DecoderStep::Kind::ByteLevel:
        pieces = byte_level(pieces);
        break;
      case DecoderStep::Kind::Replace:
        for (std::string& piece : pieces) piece = replace_literal(piece, step.from, step.to);
        break;
      case DecoderStep::Kind::ByteFallback:
        pieces = byte_fallback(pieces);
        break;
      case DecoderStep::Kind::Fuse: {
        std::string fused;
        for (const std::string& piece : pieces) fused += piece;
        pieces = {fused};
        break;
      }
      case DecoderStep::Kind::Strip:
        pieces = strip(step, std::move(pieces));
        break;
      case DecoderStep::Kind::Metaspace:
        pieces = metaspace(step, std::move(pieces));
        break;
    }
  }
  std::string text;
  for (const std::string& piece : pieces) text += piece;
  return text;
}

}  // namespace attn
