// What the terminal can show: whether to colour, how many colours, how wide a line is.
//
// Each decision is a pure function of the facts it depends on (is the stream a terminal,
// the environment variables, the window size), so it can be tested with any environment;
// the thin wrappers at the end read the real process environment and the real terminal.
// Also the small text helpers a colouring printer needs: ANSI escape sequences and the
// display width of a string that contains UTF-8 and escape sequences.
#ifndef ATTN_PRESENT_TERMINAL_H_
#define ATTN_PRESENT_TERMINAL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/walkthrough.h"
#include "present/print_limits.h"

namespace attn {

// --color auto|always|never
enum class ColorMode { Auto, Always, Never };

// "auto", "always", "never" -> the mode; anything else -> nullopt (the caller reports it).
std::optional<ColorMode> parse_color_mode(std::string_view text);
const char* color_mode_name(ColorMode mode);

// The environment variables the decisions read; nullopt when a variable is unset.
struct TerminalEnvironment {
  std::optional<std::string> no_color;   // NO_COLOR (https://no-color.org): set and non-empty = no colour
  std::optional<std::string> term;       // TERM: "dumb" = no colour; contains "256color" = 256 colours
  std::optional<std::string> colorterm;  // COLORTERM: "truecolor" or "24bit" = 24-bit colour
  std::optional<std::string> columns;    // COLUMNS: the width when the window size is unknown
};

// Colour is on when the mode is Always, or when it is Auto, the stream is a terminal,
// NO_COLOR is unset or empty and TERM is not "dumb".
bool color_enabled(ColorMode mode, bool is_terminal, const TerminalEnvironment& env);

// TrueColor when COLORTERM is "truecolor" or "24bit", Color256 when TERM contains
// "256color", Basic otherwise.
ColorDepth color_depth_for(const TerminalEnvironment& env);

// The line width: the window's columns when known (> 0), else COLUMNS when it is a
// positive integer, else kDefaultLineWidth.
std::size_t line_width_for(std::size_t window_columns, const TerminalEnvironment& env);

// ---- Wrappers that read the real process environment and terminal ----

TerminalEnvironment read_terminal_environment();  // getenv of the four variables
bool use_color(ColorMode mode, int fd);           // color_enabled(mode, isatty(fd), environment)
ColorDepth detect_color_depth();                  // color_depth_for(environment)
std::size_t terminal_width(int fd);               // ioctl(TIOCGWINSZ) on fd, then COLUMNS, then 75

// ---- Text helpers for colouring printers (pure) ----

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
};

// The xterm 256-colour palette index nearest to an RGB colour among the 6x6x6 cube
// (16..231) and the grey ramp (232..255).
int nearest_xterm256(Rgb color);

// The 16 basic ANSI colours as the xterm defaults give them; index 0..15.
int nearest_basic16(Rgb color);

// SGR escape sequences that set the background / foreground to `color` at `depth`
// ("\x1b[48;2;R;G;Bm", "\x1b[48;5;Nm", or a basic "\x1b[4Nm"/"\x1b[10Nm").
std::string background_sequence(Rgb color, ColorDepth depth);
std::string foreground_sequence(Rgb color, ColorDepth depth);
constexpr const char* kResetSequence = "\x1b[0m";

// Columns a string occupies on a terminal, as wcwidth(3) counts them: two for East Asian
// wide characters (CJK), none for combining marks (the hat of "x̂") and for ANSI escape
// sequences (ESC [ ... final byte), one for the rest.
std::size_t display_width(std::string_view text);

// `line` cut at spaces into lines of at most `width` display columns; continuation lines
// start with `hang` spaces. A word wider than the room stays whole on a line of its own.
// Spaces inside the line are kept, except where it is cut.
std::vector<std::string> wrap_line(std::string_view line, std::size_t width, std::size_t hang);
// The indent under which a cut line goes on: past its leading spaces and, when it reads
// "name = ..." with the "= " in the first half of `width`, past the "= " (so that worked
// arithmetic continues under its first term); else four spaces past the leading spaces.
std::size_t hanging_indent(std::string_view line, std::size_t width);
// wrap_line(line, width, hanging_indent(line, width)), joined by newlines.
std::string wrapped(std::string_view line, std::size_t width);
// `text` wrapped at its spaces, and a word still wider than the width (a long folder's path)
// at its slashes, each piece under the wrapped lines' indent.
std::string wrapped_path(const std::string& text, std::size_t width);

// `text` padded with spaces to `width` display columns (never cut), on the left or right.
std::string pad_left(std::string_view text, std::size_t width);
std::string pad_right(std::string_view text, std::size_t width);

}  // namespace attn

#endif  // ATTN_PRESENT_TERMINAL_H_
