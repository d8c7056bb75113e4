// Text as a terminal would show it: UTF-8 decoding, and the characters that must never
// reach a terminal raw (controls, marks that reorder text, bytes that are not UTF-8).
#ifndef ATTN_CORE_TEXT_H_
#define ATTN_CORE_TEXT_H_

#include <cstddef>
#include <optional>
#include <string>

namespace attn {

// The length of the well-formed UTF-8 sequence at text[i], its code point in *code; 0
// when it is not one (a stray continuation byte, a cut-off sequence, an overlong or
// surrogate form).
std::size_t utf8_length(const std::string& text, std::size_t i, char32_t* code);

// Characters a terminal acts on instead of showing: C0 and C1 controls, DEL, and the
// marks that reorder text (a right-to-left override can make a message say the opposite).
bool is_hidden_control(char32_t c);

// The first thing in `text` that is not printable UTF-8: "the byte 0xff at byte 3" (not
// UTF-8), "the control character U+001B at byte 5". Spaces, tabs and line breaks pass
// when `whitespace_allowed` (a sentence), not otherwise (a token).
std::optional<std::string> unprintable_part(const std::string& text, bool whitespace_allowed);

}  // namespace attn

#endif  // ATTN_CORE_TEXT_H_
