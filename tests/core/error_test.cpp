#include "attn/error.h"

#include <catch2/catch.hpp>

TEST_CASE("printable escapes control characters as JSON does", "[error]") {
  CHECK(attn::printable("plain text, \"quoted\" and caf\xc3\xa9") == "plain text, \"quoted\" and caf\xc3\xa9");
  CHECK(attn::printable("a\nb\tc\rd") == "a\\nb\\tc\\rd");
  CHECK(attn::printable(std::string("\x1b[31mred\x7f\0", 10)) == "\\u001b[31mred\\u007f\\u0000");
}

TEST_CASE("printable escapes C1 controls, reordering marks and bytes that are not UTF-8", "[error]") {
  // U+009B is the one-byte CSI of 8-bit terminals; U+202E reverses the text after it.
  CHECK(attn::printable("a\xc2\x9b"
                        "31mb") == "a\\u009b31mb");
  CHECK(attn::printable("gpj.\xe2\x80\xae"
                        "exe") == "gpj.\\u202eexe");
  CHECK(attn::printable("\xe2\x81\xa6x\xe2\x81\xa9") == "\\u2066x\\u2069");
  // not UTF-8: a lone byte, a cut-off sequence, an overlong form, a surrogate
  CHECK(attn::printable("\xff") == "\\xff");
  CHECK(attn::printable("I love \xc3") == "I love \\xc3");
  CHECK(attn::printable("\xc0\xaf") == "\\xc0\\xaf");
  CHECK(attn::printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");
  // everything else passes: letters of any script, emoji
  CHECK(attn::printable("J' aime l' IA, \xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80") ==
        "J' aime l' IA, \xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x98\x80");
}

TEST_CASE("an input error is one line whatever the file's keys hold", "[error]") {
  const attn::InputError e("model.json", "mo\ndel", "unknown key \"mo\ndel\"; did you mean \"model\"?");
  CHECK(std::string(e.what()) == "model.json: mo\\ndel: unknown key \"mo\\ndel\"; did you mean \"model\"?");
  // the parts stay as they were, for code that reads them
  CHECK(e.json_path() == "mo\ndel");
}

TEST_CASE("an input error keeps the ends of a path or message too long to read", "[error]") {
  // A key of a million letters: the path keeps 100 bytes each side, the message 500.
  const std::string key(1000000, 'k');
  const attn::InputError e("model.json", key, "unknown key \"" + key + "\"");
  const std::string what = e.what();
  CHECK(what == "model.json: " + std::string(100, 'k') + "…(999800 bytes)…" + std::string(100, 'k') +
                    ": unknown key \"" + std::string(487, 'k') + "…(999014 bytes)…" + std::string(499, 'k') + "\"");
  // A cut never splits a UTF-8 character: "é" is two bytes, the cut moves to its start.
  std::string accents;
  for (int i = 0; i < 200; ++i) accents += "\xc3\xa9";
  const attn::InputError accented("", accents, "m");
  CHECK(std::string(accented.what()).substr(0, 100) == accents.substr(0, 100));
  CHECK(std::string(accented.what()).find("…(200 bytes)…") == 100);
  // The parts stay whole for code that reads them.
  CHECK(e.json_path() == key);
}
