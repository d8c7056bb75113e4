// Text written now and copied out later, kept in pieces of a fixed size. A string stream
// doubles its buffer as it grows and holds the old and the new buffer while it copies (three
// times the text at worst, then two), and hands out a copy of it all at the end; these
// pieces hold the text and one piece more, and are written out as they are.
#ifndef ATTN_PRESENT_HELD_TEXT_H_
#define ATTN_PRESENT_HELD_TEXT_H_

#include <cstddef>
#include <memory>
#include <ostream>
#include <streambuf>
#include <vector>

namespace attn {

class HeldText : public std::streambuf {
 public:
  // 4 KiB pieces: a piece in hand is a small share of any walkthrough.
  static constexpr std::size_t kPieceBytes = 4096;

  std::size_t size() const { return full_pieces_bytes() + static_cast<std::size_t>(pptr() - pbase()); }
  void write_to(std::ostream& out) const;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* text, std::streamsize count) override;

 private:
  std::size_t full_pieces_bytes() const { return pieces_.empty() ? 0 : (pieces_.size() - 1) * kPieceBytes; }
  void new_piece();

  std::vector<std::unique_ptr<char[]>> pieces_;
};

}  // namespace attn

#endif  // ATTN_PRESENT_HELD_TEXT_H_
