#include "present/terminal.h"

#include <locale.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

namespace attn {

std::optional<ColorMode> parse_color_mode(std::string_view text) {
  if (text == "auto") return ColorMode::Auto;
  if (text == "always") return ColorMode::Always;
  if (text == "never") return ColorMode::Never;
  return std::nullopt;
}

const char* color_mode_name(ColorMode mode) {
  switch (mode) {
    case ColorMode::Auto:
      return "auto";
    case ColorMode::Always:
      return "always";
    case ColorMode::Never:
      return "never";
  }
  return "auto";
}

bool color_enabled(ColorMode mode, bool is_terminal, const TerminalEnvironment& env) {
  if (mode == ColorMode::Always) return true;
  if (mode == ColorMode::Never || !is_terminal) return false;
  if (env.no_color && !env.no_color->empty()) return false;
  if (env.term && *env.term == "dumb") return false;
  return true;
}

ColorDepth color_depth_for(const TerminalEnvironment& env) {
  if (env.colorterm && (*env.colorterm == "truecolor" || *env.colorterm == "24bit")) return ColorDepth::TrueColor;
  if (env.term && env.term->find("256color") != std::string::npos) return ColorDepth::Color256;
  return ColorDepth::Basic;
}

std::size_t line_width_for(std::size_t window_columns, const TerminalEnvironment& env) {
  if (window_columns > 0) return window_columns;
  if (env.columns && !env.columns->empty()) {
    const std::string& text = *env.columns;
    std::size_t value = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec == std::errc() && result.ptr == text.data() + text.size() && value > 0) return value;
  }
  return kDefaultLineWidth;
}

namespace {

std::optional<std::string> environment_variable(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

}  // namespace

TerminalEnvironment read_terminal_environment() {
  TerminalEnvironment env;
  env.no_color = environment_variable("NO_COLOR");
  env.term = environment_variable("TERM");
  env.colorterm = environment_variable("COLORTERM");
  env.columns = environment_variable("COLUMNS");
  return env;
}

bool use_color(ColorMode mode, int fd) { return color_enabled(mode, isatty(fd) == 1, read_terminal_environment()); }

ColorDepth detect_color_depth() { return color_depth_for(read_terminal_environment()); }

std::size_t terminal_width(int fd) {
  struct winsize size {};
  std::size_t window_columns = 0;
  if (ioctl(fd, TIOCGWINSZ, &size) == 0) window_columns = size.ws_col;
  return line_width_for(window_columns, read_terminal_environment());
}

namespace {

int squared_distance(Rgb a, int r, int g, int b) {
  const int dr = a.r - r, dg = a.g - g, db = a.b - b;
  return dr * dr + dg * dg + db * db;
}

// The six intensities of each channel in xterm's 6x6x6 colour cube.
constexpr std::array<int, 6> kCubeLevels = {0, 95, 135, 175, 215, 255};

int nearest_cube_level(int channel) {
  int best = 0;
  for (int i = 1; i < 6; ++i)
    if (std::abs(kCubeLevels[i] - channel) < std::abs(kCubeLevels[best] - channel)) best = i;
  return best;
}

// xterm's default RGB values for the 16 basic colours.
constexpr std::array<Rgb, 16> kBasicPalette = {{{0, 0, 0},
                                                {205, 0, 0},
                                                {0, 205, 0},
                                                {205, 205, 0},
                                                {0, 0, 238},
                                                {205, 0, 205},
                                                {0, 205, 205},
                                                {229, 229, 229},
                                                {127, 127, 127},
                                                {255, 0, 0},
                                                {0, 255, 0},
                                                {255, 255, 0},
                                                {92, 92, 255},
                                                {255, 0, 255},
                                                {0, 255, 255},
                                                {255, 255, 255}}};

}  // namespace

int nearest_xterm256(Rgb color) {
  const int r = nearest_cube_level(color.r), g = nearest_cube_level(color.g), b = nearest_cube_level(color.b);
  const int cube_index = 16 + 36 * r + 6 * g + b;
  const int cube_distance = squared_distance(color, kCubeLevels[r], kCubeLevels[g], kCubeLevels[b]);
  // Grey ramp 232..255 is 8, 18, ..., 238.
  const int average = (color.r + color.g + color.b) / 3;
  int grey = (average - 8 + 5) / 10;
  if (grey < 0) grey = 0;
  if (grey > 23) grey = 23;
  const int level = 8 + 10 * grey;
  const int grey_distance = squared_distance(color, level, level, level);
  return grey_distance < cube_distance ? 232 + grey : cube_index;
}

int nearest_basic16(Rgb color) {
  int best = 0;
  for (int i = 1; i < 16; ++i) {
    const Rgb& p = kBasicPalette[i];
    if (squared_distance(color, p.r, p.g, p.b) <
        squared_distance(color, kBasicPalette[best].r, kBasicPalette[best].g, kBasicPalette[best].b))
      best = i;
  }
  return best;
}

namespace {

// layer 38 = foreground, 48 = background; basic colours are 30+n / 40+n, bright 90+n / 100+n.
std::string color_sequence(Rgb color, ColorDepth depth, int layer) {
  switch (depth) {
    case ColorDepth::TrueColor:
      return fmt::format("\x1b[{};2;{};{};{}m", layer, color.r, color.g, color.b);
    case ColorDepth::Color256:
      return fmt::format("\x1b[{};5;{}m", layer, nearest_xterm256(color));
    case ColorDepth::Basic: {
      const int index = nearest_basic16(color);
      const int base = layer == 38 ? 30 : 40;
      return fmt::format("\x1b[{}m", index < 8 ? base + index : base + 60 + index - 8);
    }
  }
  return "";
}

}  // namespace

std::string background_sequence(Rgb color, ColorDepth depth) { return color_sequence(color, depth, 48); }
std::string foreground_sequence(Rgb color, ColorDepth depth) { return color_sequence(color, depth, 38); }

namespace {

// Columns of one code point on a terminal, as wcwidth(3) counts them in a UTF-8 locale:
// 2 for East Asian wide and full-width characters (CJK), 0 for combining marks (the hat of
// x̂), 1 for the rest. The C library answers for the C.UTF-8 locale, whatever the process's
// own locale is.
std::size_t code_point_width(char32_t code) {
  if (code < 0x300) return 1;
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  if (!utf8) return code <= 0x36F ? 0 : 1;
  const locale_t previous = uselocale(utf8);
  const int width = wcwidth(static_cast<wchar_t>(code));
  uselocale(previous);
  return width < 0 ? 1 : static_cast<std::size_t>(width);
}

}  // namespace

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b && i + 1 < text.size() && text[i + 1] == '[') {
      // CSI: parameters and intermediates, then one final byte in 0x40..0x7e.
      i += 2;
      while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7e)) ++i;
      ++i;
      continue;
    }
    // Decode one UTF-8 code point (a stray continuation byte counts as one column).
    std::size_t length = 1;
    char32_t code = c;
    if (c >= 0xF0)
      length = 4, code = c & 0x07;
    else if (c >= 0xE0)
      length = 3, code = c & 0x0F;
    else if (c >= 0xC0)
      length = 2, code = c & 0x1F;
    for (std::size_t k = 1; k < length && i + k < text.size(); ++k)
      code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    i += length;
    width += code_point_width(code);
  }
  return width;
}

std::string pad_left(std::string_view text, std::size_t width) {
  const std::size_t w = display_width(text);
  return std::string(w < width ? width - w : 0, ' ') + std::string(text);
}

std::string pad_right(std::string_view text, std::size_t width) {
  const std::size_t w = display_width(text);
  return std::string(text) + std::string(w < width ? width - w : 0, ' ');
}

}  // namespace attn

namespace attn {

std::vector<std::string> wrap_line(std::string_view line, std::size_t width, std::size_t hang) {
  std::vector<std::string> lines;
  const std::size_t indent_end = std::min(line.find_first_not_of(' '), line.size());
  std::string prefix;  // "" for the first line, then the hanging indent
  std::size_t start = 0;
  while (start < line.size()) {
    const std::size_t room = width > prefix.size() ? width - prefix.size() : 1;
    const std::string_view rest = line.substr(start);
    if (display_width(rest) <= room) {
      lines.push_back(prefix + std::string(rest));
      break;
    }
    // The last space at which the piece still fits, past the leading indent; else the first.
    std::size_t cut = std::string_view::npos;
    for (std::size_t p = rest.find(' ', start < indent_end ? indent_end - start : 0); p != std::string_view::npos;
         p = rest.find(' ', p + 1)) {
      if (display_width(rest.substr(0, p)) > room) {
        if (cut == std::string_view::npos) cut = p;
        break;
      }
      cut = p;
    }
    if (cut == std::string_view::npos) {
      lines.push_back(prefix + std::string(rest));
      break;
    }
    std::string piece(rest.substr(0, cut));
    while (!piece.empty() && piece.back() == ' ') piece.pop_back();
    lines.push_back(prefix + piece);
    start += cut;
    while (start < line.size() && line[start] == ' ') ++start;
    prefix.assign(hang, ' ');
  }
  return lines;
}

std::size_t hanging_indent(std::string_view line, std::size_t width) {
  const std::size_t lead = std::min(line.find_first_not_of(' '), line.size());
  const std::size_t equals = line.find(" = ", lead);
  if (equals != std::string_view::npos) {
    const std::size_t column = display_width(line.substr(0, equals + 3));
    if (column <= width / 2) return column;
  }
  return lead + 4;
}

std::string wrapped(std::string_view line, std::size_t width) {
  std::string out;
  bool first = true;
  for (const auto& piece : wrap_line(line, width, hanging_indent(line, width))) {
    out += (first ? "" : "\n") + piece;
    first = false;
  }
  return out;
}

// `text` wrapped at its spaces, and a word still wider than the page (a long folder's path)
// at its slashes, each piece under the wrapped lines' indent.
std::string wrapped_path(const std::string& text, std::size_t width) {
  std::string out;
  const std::string lines = wrapped(text, width);
  for (std::size_t start = 0; start <= lines.size();) {
    const std::size_t end = std::min(lines.find('\n', start), lines.size());
    std::string line = lines.substr(start, end - start);
    start = end + 1;
    while (display_width(line) > width) {
      std::size_t cut = std::string::npos;  // the last slash that leaves the line within the width
      for (std::size_t p = line.find('/', 5); p != std::string::npos; p = line.find('/', p + 1))
        if (display_width(line.substr(0, p + 1)) <= width) cut = p;
      if (cut == std::string::npos) break;
      out += line.substr(0, cut + 1) + "\n";
      line = "    " + line.substr(cut + 1);
    }
    out += line + (start <= lines.size() ? "\n" : "");
  }
  return out;
}

}  // namespace attn
