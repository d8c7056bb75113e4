#include "present/held_text.h"

#include <sstream>
#include <string>

#include <catch2/catch.hpp>

namespace {

// Text of `n` bytes whose every byte tells its place (a piece boundary that drops, doubles
// or reorders a byte shows).
std::string numbered_text(std::size_t n) {
  std::string text;
  for (std::size_t i = 0; i < n; ++i) text += static_cast<char>('a' + (i * 7 + i / 26) % 26);
  return text;
}

std::string written(const attn::HeldText& held) {
  std::ostringstream out;
  held.write_to(out);
  return out.str();
}

}  // namespace

TEST_CASE("held text writes out what was written, in order, across its pieces", "[held_text]") {
  constexpr std::size_t piece = attn::HeldText::kPieceBytes;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, piece - 1, piece, piece + 1, 3 * piece + 17}) {
    attn::HeldText held;
    std::ostream out(&held);
    const std::string text = numbered_text(n);
    out << text;
    CHECK(held.size() == n);
    CHECK(written(held) == text);
  }
}

TEST_CASE("held text takes single characters and blocks alike, and counts where it is", "[held_text]") {
  attn::HeldText held;
  std::ostream out(&held);
  const std::string block = numbered_text(attn::HeldText::kPieceBytes + 5);
  std::string expected;
  for (int round = 0; round < 3; ++round) {
    for (const char c : std::string(attn::HeldText::kPieceBytes - 3, 'x')) out.put(c);
    expected += std::string(attn::HeldText::kPieceBytes - 3, 'x');
    CHECK(held.size() == expected.size());
    out << block << 42 << '\n';
    expected += block + "42\n";
    CHECK(held.size() == expected.size());
  }
  CHECK(out.good());
  CHECK(written(held) == expected);
}
