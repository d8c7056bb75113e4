#include "attn/error.h"

#include <catch2/catch.hpp>

TEST_CASE("printable escapes control characters as JSON does", "[error]") {
  CHECK(attn::printable("plain text, \"quoted\" and caf\xc3\xa9") == "plain text, \"quoted\" and caf\xc3\xa9");
  CHECK(attn::printable("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  CHECK(attn::printable(std::string("\x1b[31mred\x7f\0", 10)) == "\\u001b[31mred\\u007f\\u0000");
}

TEST_CASE("an input error is one line whatever the file's keys hold", "[error]") {
  const attn::InputError e("model.json", "mo\ndel", "unknown key \"mo\ndel\"; did you mean \"model\"?");
  CHECK(std::string(e.what()) == "model.json: mo\\ndel: unknown key \"mo\\ndel\"; did you mean \"model\"?");
  // the parts stay as they were, for code that reads them
  CHECK(e.json_path() == "mo\ndel");
}
