#include "present/terminal.h"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>

#include <catch2/catch.hpp>

using attn::ColorDepth;
using attn::ColorMode;
using attn::TerminalEnvironment;

TEST_CASE("color modes parse from their names and nothing else", "[terminal]") {
  CHECK(attn::parse_color_mode("auto") == ColorMode::Auto);
  CHECK(attn::parse_color_mode("always") == ColorMode::Always);
  CHECK(attn::parse_color_mode("never") == ColorMode::Never);
  CHECK_FALSE(attn::parse_color_mode("Always").has_value());
  CHECK_FALSE(attn::parse_color_mode("yes").has_value());
  CHECK_FALSE(attn::parse_color_mode("").has_value());
  CHECK(std::string(attn::color_mode_name(ColorMode::Never)) == "never");
}

TEST_CASE("colour follows the mode, the terminal, NO_COLOR and TERM", "[terminal]") {
  const TerminalEnvironment plain{std::nullopt, std::string("xterm-256color"), std::nullopt, std::nullopt};
  CHECK(attn::color_enabled(ColorMode::Auto, true, plain));
  CHECK_FALSE(attn::color_enabled(ColorMode::Auto, false, plain));  // piped
  CHECK_FALSE(attn::color_enabled(ColorMode::Never, true, plain));
  CHECK(attn::color_enabled(ColorMode::Always, false, plain));

  TerminalEnvironment no_color = plain;
  no_color.no_color = "1";
  CHECK_FALSE(attn::color_enabled(ColorMode::Auto, true, no_color));
  CHECK(attn::color_enabled(ColorMode::Always, true, no_color));  // an explicit request wins
  no_color.no_color = "";                                         // empty counts as unset
  CHECK(attn::color_enabled(ColorMode::Auto, true, no_color));

  TerminalEnvironment dumb = plain;
  dumb.term = "dumb";
  CHECK_FALSE(attn::color_enabled(ColorMode::Auto, true, dumb));
  CHECK(attn::color_enabled(ColorMode::Always, true, dumb));

  TerminalEnvironment no_term = plain;
  no_term.term.reset();
  CHECK(attn::color_enabled(ColorMode::Auto, true, no_term));
}

TEST_CASE("colour depth from COLORTERM and TERM", "[terminal]") {
  TerminalEnvironment env;
  CHECK(attn::color_depth_for(env) == ColorDepth::Basic);
  env.term = "xterm";
  CHECK(attn::color_depth_for(env) == ColorDepth::Basic);
  env.term = "screen-256color";
  CHECK(attn::color_depth_for(env) == ColorDepth::Color256);
  env.colorterm = "truecolor";
  CHECK(attn::color_depth_for(env) == ColorDepth::TrueColor);
  env.colorterm = "24bit";
  CHECK(attn::color_depth_for(env) == ColorDepth::TrueColor);
  env.colorterm = "yes";
  CHECK(attn::color_depth_for(env) == ColorDepth::Color256);
}

TEST_CASE("line width: window, then COLUMNS, then NumPy's 75", "[terminal]") {
  TerminalEnvironment env;
  CHECK(attn::line_width_for(0, env) == 75);
  CHECK(attn::line_width_for(132, env) == 132);
  env.columns = "100";
  CHECK(attn::line_width_for(0, env) == 100);
  CHECK(attn::line_width_for(90, env) == 90);
  env.columns = "wide";
  CHECK(attn::line_width_for(0, env) == 75);
  env.columns = "0";
  CHECK(attn::line_width_for(0, env) == 75);
  env.columns = "80x";
  CHECK(attn::line_width_for(0, env) == 75);
}

TEST_CASE("the wrappers read a pipe as no terminal", "[terminal]") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  CHECK_FALSE(attn::use_color(ColorMode::Auto, fds[1]));
  CHECK(attn::use_color(ColorMode::Always, fds[1]));
  // A pipe has no window size, so the width comes from COLUMNS.
  const char* saved = std::getenv("COLUMNS");
  const std::string saved_value = saved ? saved : "";
  setenv("COLUMNS", "101", 1);
  CHECK(attn::terminal_width(fds[1]) == 101);
  unsetenv("COLUMNS");
  CHECK(attn::terminal_width(fds[1]) == 75);
  if (saved) setenv("COLUMNS", saved_value.c_str(), 1);
  close(fds[0]);
  close(fds[1]);
}

TEST_CASE("RGB maps to the nearest xterm palette entry", "[terminal]") {
  CHECK(attn::nearest_xterm256({255, 0, 0}) == 196);      // cube (5,0,0)
  CHECK(attn::nearest_xterm256({0, 0, 0}) == 16);         // cube black beats grey 8
  CHECK(attn::nearest_xterm256({128, 128, 128}) == 244);  // grey 8+10*12 = 128 exactly
  // (68,1,84): cube levels 95,0,95 at distance 27²+1²+11² = 851; nearest grey 48 is farther.
  CHECK(attn::nearest_xterm256({68, 1, 84}) == 16 + 36 * 1 + 6 * 0 + 1);
  CHECK(attn::nearest_basic16({255, 0, 0}) == 9);
  CHECK(attn::nearest_basic16({200, 0, 0}) == 1);
  CHECK(attn::nearest_basic16({250, 250, 250}) == 15);
}

TEST_CASE("escape sequences for each depth", "[terminal]") {
  CHECK(attn::background_sequence({1, 2, 3}, ColorDepth::TrueColor) == "\x1b[48;2;1;2;3m");
  CHECK(attn::foreground_sequence({1, 2, 3}, ColorDepth::TrueColor) == "\x1b[38;2;1;2;3m");
  CHECK(attn::background_sequence({255, 0, 0}, ColorDepth::Color256) == "\x1b[48;5;196m");
  CHECK(attn::background_sequence({200, 0, 0}, ColorDepth::Basic) == "\x1b[41m");
  CHECK(attn::background_sequence({255, 0, 0}, ColorDepth::Basic) == "\x1b[101m");
  CHECK(attn::foreground_sequence({0, 0, 0}, ColorDepth::Basic) == "\x1b[30m");
}

TEST_CASE("display width counts code points and skips escape sequences", "[terminal]") {
  CHECK(attn::display_width("") == 0);
  CHECK(attn::display_width("love") == 4);
  CHECK(attn::display_width("┌──┐") == 4);
  CHECK(attn::display_width("x∈[0, 1] μ σ") == 12);
  CHECK(attn::display_width("\x1b[48;5;196m0.50\x1b[0m") == 4);
  CHECK(attn::display_width("x̂ = γ·x̂") == 7);  // the combining hat takes no column
  CHECK(attn::display_width("\x1b[0m") == 0);
  CHECK(attn::pad_left("▒", 3) == "  ▒");
  CHECK(attn::pad_right("Q:\"I\"", 7) == "Q:\"I\"  ");
  CHECK(attn::pad_left("toolong", 3) == "toolong");
}

TEST_CASE("display width is wcwidth's: CJK characters take two columns", "[terminal]") {
  // "我爱" is two wide characters (4 columns): counted as 2 before, so CJK labels misaligned tables.
  CHECK(attn::display_width("我爱") == 4);
  CHECK(attn::display_width("Q:\"我\"") == 6);
  CHECK(attn::display_width("ｘ") == 2);  // full-width Latin
  CHECK(attn::pad_left("我", 4) == "  我");
}

TEST_CASE("prose is wrapped to the line width, continuing under the first term", "[terminal]") {
  // Cut at the last space that fits 20 columns; "= " is at column 4, so the rest hangs there.
  CHECK(attn::wrapped("x = aaaa bbbb cccc dddd eeee", 20) == "x = aaaa bbbb cccc\n    dddd eeee");
  // No "=" in the first half: four columns past the leading spaces.
  CHECK(attn::wrapped("  one two three four five six", 16) == "  one two three\n      four five\n      six");
  // A word wider than the line stays whole; a line that fits is left alone.
  CHECK(attn::wrapped("abcdefghijkl xy", 5) == "abcdefghijkl\n    xy");
  CHECK(attn::wrapped("short", 75) == "short");
  for (const auto& line : attn::wrap_line("我爱 我爱 我爱", 10, 0)) CHECK(attn::display_width(line) <= 10);
}
