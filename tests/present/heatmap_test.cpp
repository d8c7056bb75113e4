#include "present/heatmap.h"

#include <cmath>
#include <stdexcept>

#include <catch2/catch.hpp>

#include "attn/error.h"

// Expected strings are worked out by hand from the rules in heatmap.h: each column is
// max(label width, value width) wide ("0.25" is 4), one space before each column, the
// row label column as wide as the widest row label, then "  ◀ key value" for the row's
// strongest key.

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

TEST_CASE("Unicode shading heatmap", "[heatmap]") {
  const std::string expected =
      "        I love   AI\n"
      "I    ████            ◀ I 1.00\n"
      "love ░░░░ ▓▓▓▓       ◀ love 0.75\n"
      "AI        ░░░░ ▓▓▓▓  ◀ AI 0.63\n"
      "scale 0 \" ░▒▓█\" 1 (one block per fifth); ◀ marks the strongest key\n";
  CHECK(attn::render_heatmap(kWeights, kTokens, kTokens) == expected);
}

TEST_CASE("plain ASCII heatmap", "[heatmap]") {
  attn::HeatmapOptions options;
  options.style = attn::HeatmapStyle::Ascii;
  const std::string expected =
      "        I love   AI\n"
      "I    @@@@            <- I 1.00\n"
      "love :::: ####       <- love 0.75\n"
      "AI   .... :::: ****  <- AI 0.63\n"
      "scale 0 \" .:-=+*#%@\" 1 (one character per tenth); <- marks the strongest key\n";
  CHECK(attn::render_heatmap(kWeights, kTokens, kTokens, options) == expected);
}

TEST_CASE("colour heatmap with values inside the cells", "[heatmap]") {
  const attn::Tensor w = matrix({2, 2}, {1.0, 0.0, 0.25, 0.75});
  attn::HeatmapOptions options;
  options.style = attn::HeatmapStyle::Color;
  options.depth = attn::ColorDepth::TrueColor;
  // Backgrounds: 1.0 -> (253,231,37), bright, black text; 0 -> (68,1,84) and 0.25 -> (59,82,139), dark,
  // white text; 0.75 -> (94,201,98), luminance 0.67, black text.
  CHECK(attn::render_heatmap(w, {"a", "b"}, {"x", "y"}, options) ==
        "     x    y\n"
        "a \x1b[48;2;253;231;37m\x1b[38;2;0;0;0m1.00\x1b[0m \x1b[48;2;68;1;84m\x1b[38;2;255;255;255m0.00\x1b[0m"
        "  ◀ x 1.00\n"
        "b \x1b[48;2;59;82;139m\x1b[38;2;255;255;255m0.25\x1b[0m \x1b[48;2;94;201;98m\x1b[38;2;0;0;0m0.75\x1b[0m"
        "  ◀ y 0.75\n");

  // The same at 256 colours: (253,231,37) -> cube (5,4,0) = 220, (68,1,84) -> (1,0,1) = 53,
  // (59,82,139) -> (1,1,2) = 60, (94,201,98) -> (1,4,1) = 77; black 16, white 231.
  options.depth = attn::ColorDepth::Color256;
  CHECK(attn::render_heatmap(w, {"a", "b"}, {"x", "y"}, options) ==
        "     x    y\n"
        "a \x1b[48;5;220m\x1b[38;5;16m1.00\x1b[0m \x1b[48;5;53m\x1b[38;5;231m0.00\x1b[0m  ◀ x 1.00\n"
        "b \x1b[48;5;60m\x1b[38;5;231m0.25\x1b[0m \x1b[48;5;77m\x1b[38;5;16m0.75\x1b[0m  ◀ y 0.75\n");
}

TEST_CASE("wide labels widen their column, and ties name every strongest key", "[heatmap]") {
  const attn::Tensor w = matrix({2, 2}, {0.5, 0.5, 0.1, 0.9});
  // "machine" is 7 wide, so its cells are 7 glyphs; 0.5 -> ▒, 0.1 -> 0.5 -> " ", 0.9 -> █.
  CHECK(attn::render_heatmap(w, {"I", "machine"}, {"I", "machine"}) ==
        "           I machine\n"
        "I       ▒▒▒▒ ▒▒▒▒▒▒▒  ◀ I, machine 0.50\n"
        "machine      ███████  ◀ machine 0.90\n"
        "scale 0 \" ░▒▓█\" 1 (one block per fifth); ◀ marks the strongest key\n");
}

TEST_CASE("missing labels become indices and NaN cells show ?", "[heatmap]") {
  const attn::Tensor w = matrix({2, 2}, {NAN, NAN, 0.3, NAN});
  attn::HeatmapOptions options;
  options.legend = false;
  // Column 0 is as wide as "0.30" (4), column 1 as "nan" (3). Row 0 has no number, so no
  // strongest key; row 1's strongest is column 0.
  CHECK(attn::render_heatmap(w, {}, {}, options) ==
        "     0   1\n"
        "0 ???? ???\n"
        "1 ░░░░ ???  ◀ 0 0.30\n");
}

TEST_CASE("bad shapes and label counts are rejected", "[heatmap]") {
  CHECK_THROWS_AS(attn::render_heatmap(attn::Tensor({2}), {}, {}), attn::InternalError);
  CHECK_THROWS_AS(attn::render_heatmap(kWeights, {"I", "love"}, kTokens), attn::InternalError);
  CHECK_THROWS_AS(attn::render_heatmap(kWeights, kTokens, {"I"}), attn::InternalError);
}

TEST_CASE("per-head heatmaps side by side", "[heatmap]") {
  const attn::Tensor head0 = matrix({2, 2}, {1.0, 0.0, 0.25, 0.75});
  const attn::Tensor head1 = matrix({2, 2}, {0.5, 0.5, 0.0, 1.0});
  // Block 0's widest line is "a ████       ◀ x 1.00" (21 columns); blocks are 4 apart.
  const std::string expected =
      "head 0                   head 1\n"
      "     x    y                   x    y\n"
      "a ████       ◀ x 1.00    a ▒▒▒▒ ▒▒▒▒  ◀ x, y 0.50\n"
      "b ░░░░ ▓▓▓▓  ◀ y 0.75    b      ████  ◀ y 1.00\n"
      "scale 0 \" ░▒▓█\" 1 (one block per fifth); ◀ marks the strongest key\n";
  CHECK(attn::render_heatmaps_side_by_side({head0, head1}, {"head 0", "head 1"}, {"a", "b"}, {"x", "y"}) == expected);
}
