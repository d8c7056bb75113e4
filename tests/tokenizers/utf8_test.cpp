// UTF-8 validity and the lossy conversion, against Unicode's table 3-7 and the U+FFFD
// substitution of maximal subparts (Unicode 15, section 3.9; Rust's from_utf8_lossy).
#include <catch2/catch.hpp>

#include "tokenizers/utf8.h"

TEST_CASE("utf8_sequence_length follows table 3-7", "[tokenizers]") {
  CHECK(attn::utf8_sequence_length("a", 0) == 1);
  CHECK(attn::utf8_sequence_length("\xC3\xA9", 0) == 2);          // é
  CHECK(attn::utf8_sequence_length("\xE2\x96\x81", 0) == 3);      // ▁
  CHECK(attn::utf8_sequence_length("\xF0\x9F\x98\x80", 0) == 4);  // 😀
  CHECK(attn::utf8_sequence_length("\xC0\x80", 0) == 0);          // overlong NUL
  CHECK(attn::utf8_sequence_length("\xE0\x80\x80", 0) == 0);      // overlong
  CHECK(attn::utf8_sequence_length("\xED\xA0\x80", 0) == 0);      // surrogate D800
  CHECK(attn::utf8_sequence_length("\xF4\x90\x80\x80", 0) == 0);  // past U+10FFFF
  CHECK(attn::utf8_sequence_length("\xE2\x96", 0) == 0);          // truncated
  CHECK(attn::first_invalid_utf8("ab\xFF"
                                 "c") == std::optional<std::size_t>(2));
  CHECK_FALSE(attn::first_invalid_utf8("naïve 😀").has_value());
}

TEST_CASE("utf8_lossy replaces each maximal subpart with one U+FFFD", "[tokenizers]") {
  const std::string r = "\xEF\xBF\xBD";
  // Unicode's example (table 3-8): 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 becomes
  // a, FFFD (F1 80 80), FFFD (E1 80), FFFD (C2), b, FFFD, c, FFFD, FFFD, d.
  CHECK(attn::utf8_lossy("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64") ==
        "a" + r + r + r + "b" + r + "c" + r + r + "d");
  CHECK(attn::utf8_lossy("\xC3\xA9") == "é");
  CHECK(attn::utf8_lossy("\xED\xA0\x80") == r + r + r);  // a surrogate: E0..9F after ED fails at once
}
