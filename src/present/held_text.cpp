#include "present/held_text.h"

#include <algorithm>

namespace attn {

void HeldText::new_piece() {
  pieces_.push_back(std::make_unique<char[]>(kPieceBytes));
  char* piece = pieces_.back().get();
  setp(piece, piece + kPieceBytes);
}

HeldText::int_type HeldText::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  new_piece();
  *pptr() = traits_type::to_char_type(c);
  pbump(1);
  return c;
}

std::streamsize HeldText::xsputn(const char* text, std::streamsize count) {
  for (std::streamsize left = count; left > 0;) {
    if (pptr() == epptr()) new_piece();
    const auto room = static_cast<std::streamsize>(epptr() - pptr());
    const std::streamsize n = std::min(left, room);
    std::copy(text, text + n, pptr());
    pbump(static_cast<int>(n));
    text += n;
    left -= n;
  }
  return count;
}

void HeldText::write_to(std::ostream& out) const {
  for (std::size_t i = 0; i < pieces_.size(); ++i) {
    const bool last = i + 1 == pieces_.size();
    out.write(pieces_[i].get(), static_cast<std::streamsize>(last ? pptr() - pbase() : kPieceBytes));
  }
}

}  // namespace attn
