#include "present/heatmap.h"

#include <cmath>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "attn/error.h"

// Expected strings are worked out by hand from the rules in heatmap.h: a column of shades is
// as wide as its label (two at least), a coloured one max(label width, value width) ("0.25"
// is 4), one space before each column, the row label column as wide as the widest row label,
// then "  ◀ key value" for the row's strongest key.

namespace {

attn::Tensor matrix(attn::Shape shape, std::vector<double> data) {
  attn::Tensor t(std::move(shape), {"S", "T"});
  t.data.assign(data.begin(), data.end());
  return t;
}

// Rows sum to 1; no value sits on a bin boundary of either ramp.
//   shade (x5):  1.0->5 █; 0->0 " "; 0.25->1.25 ░; 0.75->3.75 ▓; 0.15->0.75 " "; 0.22->1.1 ░; 0.63->3.15 ▓
//   ascii (x10): 1.0->@;   0->" ";   0.25->2.5 :;   0.75->7.5 #;   0.15->1.5 .;    0.22->2.2 :; 0.63->6.3 *
const attn::Tensor kWeights = matrix({3, 3}, {1.0, 0.0, 0.0, 0.25, 0.75, 0.0, 0.15, 0.22, 0.63});
const std::vector<std::string> kTokens = {"I", "love", "AI"};

}  // namespace

TEST_CASE("glyphs by value", "[heatmap]") {
  using attn::HeatmapStyle;
  CHECK(attn::heatmap_glyph(0.0, HeatmapStyle::Shade) == " ");
  CHECK(attn::heatmap_glyph(0.39, HeatmapStyle::Shade) == "░");
  CHECK(attn::heatmap_glyph(0.5, HeatmapStyle::Shade) == "▒");
  CHECK(attn::heatmap_glyph(0.79, HeatmapStyle::Shade) == "▓");
  CHECK(attn::heatmap_glyph(1.0, HeatmapStyle::Shade) == "█");
  CHECK(attn::heatmap_glyph(7.0, HeatmapStyle::Shade) == "█");  // clamped
  CHECK(attn::heatmap_glyph(-1.0, HeatmapStyle::Shade) == " ");
  CHECK(attn::heatmap_glyph(NAN, HeatmapStyle::Shade) == "?");
  CHECK(attn::heatmap_glyph(0.05, HeatmapStyle::Ascii) == " ");
  CHECK(attn::heatmap_glyph(0.55, HeatmapStyle::Ascii) == "+");
  CHECK(attn::heatmap_glyph(0.95, HeatmapStyle::Ascii) == "@");
}

TEST_CASE("the colour ramp runs through viridis' anchors", "[heatmap]") {
  const auto rgb = [](double v) {
    const attn::Rgb c = attn::heatmap_color(v);
    return std::vector<int>{c.r, c.g, c.b};
  };
  CHECK(rgb(0.0) == std::vector<int>{68, 1, 84});
  CHECK(rgb(0.25) == std::vector<int>{59, 82, 139});
  CHECK(rgb(0.5) == std::vector<int>{33, 145, 140});
  CHECK(rgb(1.0) == std::vector<int>{253, 231, 37});
  // 0.15 is 0.6 of the way from anchor 0 to anchor 1: 68-9*0.6 = 62.6, 1+81*0.6 = 49.6, 84+55*0.6 = 117.
  CHECK(rgb(0.15) == std::vector<int>{63, 50, 117});
}

TEST_CASE("Unicode shading heatmap, each row against its largest weight", "[heatmap]") {
  // Row "love": 0.25 / 0.75 = 0.33 -> ░, 0.75 / 0.75 = 1 -> █. Row "AI": 0.15 / 0.63 = 0.24 -> ░,
  // 0.22 / 0.63 = 0.35 -> ░, 1 -> █. (Against 1 as before, 0.15 fell under 0.2: a blank like no weight.)
  const std::string expected =
      "      I love AI\n"
      "I    ██          ◀ I 1.00\n"
      "love ░░ ████     ◀ love 0.75\n"
      "AI   ░░ ░░░░ ██  ◀ AI 0.63\n"
      "\" \"<.2 ░<.4 ▒<.6 ▓<.8 █ of the row's largest; ◀ strongest key\n";
  CHECK(attn::render_heatmap(kWeights, kTokens, kTokens) == expected);
}

TEST_CASE("against the map's largest weight, when asked", "[heatmap]") {
  attn::HeatmapOptions options;
  options.scale = attn::HeatmapScale::Map;
  // The map's largest is 1: 0.25 -> ░, 0.75 -> ▓, 0.15 -> " ", 0.22 -> ░, 0.63 -> ▓.
  CHECK(attn::render_heatmap(kWeights, kTokens, kTokens, options) ==
        "      I love AI\n"
        "I    ██          ◀ I 1.00\n"
        "love ░░ ▓▓▓▓     ◀ love 0.75\n"
        "AI      ░░░░ ▓▓  ◀ AI 0.63\n"
        "\" \"<.2 ░<.4 ▒<.6 ▓<.8 █ of the map's largest; ◀ strongest key\n");
}

TEST_CASE("on the unit scale, the walkthrough's and the HTML page's: each weight against 1", "[heatmap]") {
  attn::HeatmapOptions options;
  options.scale = attn::HeatmapScale::Unit;
  // A row of three 0.33 is pale (0.33 x 5 = 1.65 -> ░), not solid as against its row's
  // largest; the rows of kWeights: 0.25 -> ░, 0.75 -> ▓, 0.15 -> " ", 0.22 -> ░, 0.63 -> ▓.
  const attn::Tensor thirds = matrix({1, 3}, {1.0 / 3, 1.0 / 3, 1.0 / 3});
  CHECK(attn::render_heatmap(thirds, {"x"}, kTokens, options) ==
        "   I love AI\n"
        "x ░░ ░░░░ ░░  ◀ I, love, AI 0.33\n"
        "\" \"<.2 ░<.4 ▒<.6 ▓<.8 █ of 1 (the weight itself, the HTML page's scale); ◀ strongest key\n");
  CHECK(attn::render_heatmap(kWeights, kTokens, kTokens, options) ==
        "      I love AI\n"
        "I    ██          ◀ I 1.00\n"
        "love ░░ ▓▓▓▓     ◀ love 0.75\n"
        "AI      ░░░░ ▓▓  ◀ AI 0.63\n"
        "\" \"<.2 ░<.4 ▒<.6 ▓<.8 █ of 1 (the weight itself, the HTML page's scale); ◀ strongest key\n");
}

TEST_CASE("small weights are not blank: 13 keys of about 1/13 each", "[heatmap]") {
  // Every weight under 0.2 drew as a blank, the same as a masked key; against the row's largest
  // (0.0769 / 0.0769 = 1) each is █.
  const attn::Tensor w = matrix({1, 13}, std::vector<double>(13, 1.0 / 13));
  attn::HeatmapOptions options;
  options.legend = false;
  options.numbered_columns = true;
  const std::string text = attn::render_heatmap(w, {"q"}, {}, options);
  CHECK(text.find("q █ █ █ █ █ █ █ █ █ █ ██ ██ ██  ◀ 0, 1, 2") != std::string::npos);
}

TEST_CASE("masked cells are drawn apart from small weights", "[heatmap]") {
  // Row a: key y masked (·); row b: 0.01 / 0.99 -> " " (a small weight), 0.99 -> █.
  const attn::Tensor w = matrix({2, 2}, {1.0, 0.0, 0.01, 0.99});
  const attn::Tensor masked = matrix({2, 2}, {0, 1, 0, 0});
  CHECK(attn::render_heatmap(w, {"a", "b"}, {"x", "y"}, {}, masked) ==
        "   x  y\n"
        "a ██  ·  ◀ x 1.00\n"
        "b    ██  ◀ y 0.99\n"
        "\" \"<.2 ░<.4 ▒<.6 ▓<.8 █ of the row's largest; · masked; ◀ strongest key\n");
  attn::HeatmapOptions ascii;
  ascii.style = attn::HeatmapStyle::Ascii;
  ascii.legend = false;
  CHECK(attn::render_heatmap(w, {"a", "b"}, {"x", "y"}, ascii, masked) ==
        "   x  y\n"
        "a @@  x  <- x 1.00\n"
        "b    @@  <- y 0.99\n");
}

TEST_CASE("plain ASCII heatmap", "[heatmap]") {
  attn::HeatmapOptions options;
  options.style = attn::HeatmapStyle::Ascii;
  // Tenths of the row's largest: 0.33 -> "-", 0.24 -> ":", 0.35 -> "-", 1 -> "@".
  const std::string expected =
      "      I love AI\n"
      "I    @@          <- I 1.00\n"
      "love -- @@@@     <- love 0.75\n"
      "AI   :: ---- @@  <- AI 0.63\n"
      "\" .:-=+*#%@\" tenths of the row's largest; <- strongest key\n";
  CHECK(attn::render_heatmap(kWeights, kTokens, kTokens, options) == expected);
}

TEST_CASE("colour heatmap with values inside the cells", "[heatmap]") {
  const attn::Tensor w = matrix({2, 2}, {1.0, 0.0, 0.25, 0.75});
  attn::HeatmapOptions options;
  options.style = attn::HeatmapStyle::Color;
  options.depth = attn::ColorDepth::TrueColor;
  options.legend = false;
  // Against the row's largest: row a 1 -> (253,231,37), black text; 0 -> (68,1,84), white text. Row b:
  // 0.25 / 0.75 = 1/3 -> a third of the way from (59,82,139) to (33,145,140): (50,103,139), luminance
  // 0.37, white text; 0.75 / 0.75 = 1 -> (253,231,37).
  CHECK(attn::render_heatmap(w, {"a", "b"}, {"x", "y"}, options) ==
        "     x    y\n"
        "a \x1b[48;2;253;231;37m\x1b[38;2;0;0;0m1.00\x1b[0m \x1b[48;2;68;1;84m\x1b[38;2;255;255;255m0.00\x1b[0m"
        "  ◀ x 1.00\n"
        "b \x1b[48;2;50;103;139m\x1b[38;2;255;255;255m0.25\x1b[0m \x1b[48;2;253;231;37m\x1b[38;2;0;0;0m0.75\x1b[0m"
        "  ◀ y 0.75\n");
}

TEST_CASE("16 colours run from dark to bright in order of value, with a legend", "[heatmap]") {
  // xterm's luminances (0.2126 R + 0.7152 G + 0.0722 B): blue (0,0,238) 17, bright blue (92,92,255)
  // 104, cyan (0,205,205) 161, yellow (205,205,0) 190, bright yellow (255,255,0) 237. The nearest
  // basic colour to each viridis shade was not in order (the 16-colour map was not ordered by value).
  const char* backgrounds[] = {"\x1b[44m", "\x1b[104m", "\x1b[46m", "\x1b[43m", "\x1b[103m"};
  for (int band = 0; band < 5; ++band)
    CHECK(attn::heatmap_cell_colors(0.1 + 0.2 * band, attn::ColorDepth::Basic).rfind(backgrounds[band], 0) == 0);
  attn::HeatmapOptions options;
  options.style = attn::HeatmapStyle::Color;
  options.depth = attn::ColorDepth::Basic;
  const std::string text = attn::render_heatmap(matrix({1, 1}, {1.0}), {"a"}, {"x"}, options);
  CHECK(
      text.find("the row's largest: \x1b[44m\x1b[97m<.2\x1b[0m \x1b[104m\x1b[97m<.4\x1b[0m \x1b[46m\x1b[30m<.6\x1b[0m "
                "\x1b[43m\x1b[30m<.8\x1b[0m \x1b[103m\x1b[30m≤1\x1b[0m; ◀ strongest key\n") != std::string::npos);
}

TEST_CASE("wide labels widen their column, and ties name every strongest key", "[heatmap]") {
  const attn::Tensor w = matrix({2, 2}, {0.5, 0.5, 0.1, 0.9});
  attn::HeatmapOptions options;
  options.legend = false;
  // "machine" is 7 wide, so its cells are 7 glyphs, "I" 2; 0.5 / 0.5 -> █; 0.1 / 0.9 = 0.11 -> " ", 0.9 / 0.9 -> █.
  CHECK(attn::render_heatmap(w, {"I", "machine"}, {"I", "machine"}, options) ==
        "         I machine\n"
        "I       ██ ███████  ◀ I, machine 0.50\n"
        "machine    ███████  ◀ machine 0.90\n");
}

TEST_CASE("missing labels become indices and NaN cells show ?", "[heatmap]") {
  const attn::Tensor w = matrix({2, 2}, {NAN, NAN, 0.3, NAN});
  attn::HeatmapOptions options;
  options.legend = false;
  // Columns two wide. Row 0 has no number, so no strongest key; row 1's strongest is column 0
  // (0.3 / 0.3 -> █).
  CHECK(attn::render_heatmap(w, {}, {}, options) ==
        "   0  1\n"
        "0 ?? ??\n"
        "1 ██ ??  ◀ 0 0.30\n");
}

TEST_CASE("bad shapes and label counts are rejected", "[heatmap]") {
  CHECK_THROWS_AS(attn::render_heatmap(attn::Tensor({2}), {}, {}), attn::InternalError);
  CHECK_THROWS_AS(attn::render_heatmap(kWeights, {"I", "love"}, kTokens), attn::InternalError);
  CHECK_THROWS_AS(attn::render_heatmap(kWeights, kTokens, {"I"}), attn::InternalError);
}

TEST_CASE("per-head heatmaps side by side when they fit, else stacked, else numbered", "[heatmap]") {
  const attn::Tensor head0 = matrix({2, 2}, {1.0, 0.0, 0.25, 0.75});
  const attn::Tensor head1 = matrix({2, 2}, {0.5, 0.5, 0.0, 1.0});
  const std::vector<attn::HeatmapBlock> blocks = {{"head 0", head0, {}}, {"head 1", head1, {}}};
  attn::HeatmapOptions options;
  options.legend = false;
  // Block 0 is 17 columns wide ("a ██     ◀ x 1.00"), block 1 20 ("a ██ ██  ◀ x, y 0.50"); 4 apart: 41.
  const std::string side_by_side =
      "head 0               head 1\n"
      "   x  y                 x  y\n"
      "a ██     ◀ x 1.00    a ██ ██  ◀ x, y 0.50\n"
      "b ░░ ██  ◀ y 0.75    b    ██  ◀ y 1.00\n";
  CHECK(attn::render_heatmaps(blocks, {"a", "b"}, {"x", "y"}, options, 41) == side_by_side);
  // One column less: side by side still, the markers without the keys' names (the shade
  // shows which): 15 + 4 + 15 = 34 columns.
  const std::string short_markers =
      "head 0             head 1\n"
      "   x  y               x  y\n"
      "a ██     ◀ 1.00    a ██ ██  ◀ 0.50\n"
      "b ░░ ██  ◀ 0.75    b    ██  ◀ 1.00\n";
  CHECK(attn::render_heatmaps(blocks, {"a", "b"}, {"x", "y"}, options, 40) == short_markers);
  CHECK(attn::render_heatmaps(blocks, {"a", "b"}, {"x", "y"}, options, 34) == short_markers);
  // Narrower than that: one block under the other, with the keys' names (the widest is 20).
  const std::string stacked =
      "head 0\n"
      "   x  y\n"
      "a ██     ◀ x 1.00\n"
      "b ░░ ██  ◀ y 0.75\n"
      "head 1\n"
      "   x  y\n"
      "a ██ ██  ◀ x, y 0.50\n"
      "b    ██  ◀ y 1.00\n";
  CHECK(attn::render_heatmaps(blocks, {"a", "b"}, {"x", "y"}, options, 33) == stacked);
  CHECK(attn::render_heatmaps(blocks, {"a", "b"}, {"x", "y"}, options, 20) == stacked);
  // Narrower than a block: columns numbered, one glyph wide, keys listed under the maps.
  options.legend = true;
  const std::string numbered = attn::render_heatmaps(blocks, {"a", "b"}, {"x", "y"}, options, 19);
  CHECK(numbered.find("a █ █  ◀ x, y 0.50\n") != std::string::npos);
  CHECK(numbered.find("  0 1\n") != std::string::npos);
  CHECK(numbered.find("columns: 0 x, 1 y\n") != std::string::npos);
  CHECK(attn::render_heatmaps(blocks, {"a", "b"}, {"x", "y"}, options, 5).empty());
}
