// Doubles as text, fast: the JSON dump writes tens of millions of them.
#ifndef ATTN_IO_NUMBER_TEXT_H_
#define ATTN_IO_NUMBER_TEXT_H_

#include <string>

namespace attn {

// The longest text write_shortest produces ("-2.2250738585072014e-308" is 24), and how
// many bytes at `out` it may overwrite: it copies digits in fixed 16-byte blocks, and
// bytes past the returned end are scratch.
constexpr int kMaxShortestChars = 24;
constexpr int kShortestScratch = 40;

// Writes v as Python's repr(float), and so json.dumps, writes it: the fewest digits that
// read back as the same double, in exponent form when the decimal exponent is below -4 or
// at least 16 ("1e-05", "1.5e+16"), else positional with at least one digit after the
// point ("1.0", "0.0001", "123.25"). NaN and infinities as Python's json writes them: NaN,
// Infinity, -Infinity. Returns the end of the text (at most kMaxShortestChars chars); the
// kShortestScratch bytes at `out` must be writable.
char* write_shortest(double v, char* out);

std::string shortest_text(double v);

// The same text by the portable route (std::to_chars), for checking the fast one.
std::string shortest_text_portable(double v);

}  // namespace attn

#endif  // ATTN_IO_NUMBER_TEXT_H_
