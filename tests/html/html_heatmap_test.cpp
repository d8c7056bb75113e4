#include "html/html_heatmap.h"

#include <string>

#include <catch2/catch.hpp>

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Two queries over two keys; the second key is hidden from the first query.
attn::HeatmapView two_by_two(std::size_t heads) {
  attn::HeatmapView view;
  for (std::size_t h = 0; h < heads; ++h) {
    attn::Tensor w({2, 2}, {"S", "S"});
    w.data = {1, 0, 0.25, 0.75};
    attn::Tensor masked({2, 2}, {"S", "S"});
    masked.data = {0, 1, 0, 0};
    view.heads.push_back(w);
    view.masked.push_back(masked);
    view.titles.push_back("head " + std::to_string(h));
  }
  view.row_labels = {"I", "<b>"};
  view.column_labels = {"I", "<b>"};
  view.caption = "heatmap: rows are queries, columns keys";
  return view;
}

}  // namespace

TEST_CASE("a head's heatmap: a cell per weight, coloured by it, with its query, key and weight on hover", "[html]") {
  const attn::HeatmapView view = two_by_two(1);
  const std::string svg =
      attn::heatmap_svg({view.heads[0], view.masked[0], view.row_labels, view.column_labels, "head 0"}, false);
  CHECK(svg.rfind("<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(count(svg, "<rect class=\"cell\"") == 4);
  // Weight 1 is viridis' brightest colour, 0 its darkest; a masked cell is grey.
  CHECK(svg.find("fill=\"#fde725\"><title>head 0: query &quot;I&quot; (0) → key &quot;I&quot; (0): weight "
                 "1.0000</title>") != std::string::npos);
  CHECK(svg.find("fill=\"#d0d0d0\"><title>head 0: query &quot;I&quot; (0) → key &quot;&lt;b&gt;&quot; (1): masked "
                 "(weight 0)</title>") != std::string::npos);
  CHECK(svg.find("<title>head 0: query &quot;&lt;b&gt;&quot; (1) → key &quot;&lt;b&gt;&quot; (1): weight "
                 "0.7500</title>") != std::string::npos);
  CHECK(svg.find(">0.75</text>") != std::string::npos);  // written in the cell
  CHECK(svg.find("<text class=\"row-label\"") != std::string::npos);

  const std::string thumbnail =
      attn::heatmap_svg({view.heads[0], view.masked[0], view.row_labels, view.column_labels, "head 0"}, true);
  CHECK(thumbnail.find("<svg class=\"thumbnail\"") == 0);
  CHECK(thumbnail.find("row-label") == std::string::npos);
  CHECK(thumbnail.find("width=\"48\" height=\"48\"") != std::string::npos);  // 2 cells of 24
}

TEST_CASE("a step's heads come with a selector that needs no script", "[html]") {
  const std::string group = attn::heatmap_group(two_by_two(3), "hm-9-0");
  CHECK(count(group, "<svg class=\"heatmap\"") == 3);
  CHECK(group.find("<input type=\"radio\" name=\"pick-hm-9-0\" id=\"pick-hm-9-0-all\" class=\"pick-all\" checked>") !=
        std::string::npos);
  CHECK(group.find("<input type=\"radio\" name=\"pick-hm-9-0\" id=\"pick-hm-9-0-2\" class=\"pick-2\">"
                   "<label for=\"pick-hm-9-0-2\">head 2</label>") != std::string::npos);
  CHECK(group.find("<figure class=\"head h-2\" id=\"hm-9-0-2\">") != std::string::npos);
  CHECK(group.find("<p class=\"readout\">") != std::string::npos);
  CHECK(attn::head_selector_css(2) ==
        ".pick-0:checked ~ .maps .head:not(.h-0) { display: none; }\n"
        ".pick-1:checked ~ .maps .head:not(.h-1) { display: none; }\n");
  // One head: nothing to choose.
  CHECK(attn::heatmap_group(two_by_two(1), "hm-3-0").find("type=\"radio\"") == std::string::npos);
}

TEST_CASE("the overview: every block's heads small, linked to their heatmaps", "[html]") {
  const std::string table = attn::overview_table({{"Encoder layer 0, self-attention", 14, "hm-14-0", two_by_two(2)},
                                                  {"Decoder layer 0, cross-attention", 55, "hm-55-0", two_by_two(2)}});
  CHECK(count(table, "<svg class=\"thumbnail\"") == 4);
  CHECK(table.find("<thead><tr><th></th><th>head 0</th><th>head 1</th></tr></thead>") != std::string::npos);
  CHECK(table.find("<tr><th>Decoder layer 0, cross-attention <a href=\"#step-55\">step 55</a></th><td><a "
                   "href=\"#hm-55-0-0\"") != std::string::npos);
}
