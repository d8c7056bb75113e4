#include "html/html_tensor.h"

#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "html/html_text.h"

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

attn::Tensor counting(attn::Shape shape, attn::AxisNames axes) {
  attn::Tensor t(std::move(shape), std::move(axes));
  for (std::size_t i = 0; i < t.size(); ++i) t.data[i] = static_cast<double>(i);
  return t;
}

}  // namespace

TEST_CASE("text is escaped for elements and attributes", "[html]") {
  CHECK(attn::escaped("<a href=\"x\">Tom & 'Jerry'</a>") ==
        "&lt;a href=&quot;x&quot;&gt;Tom &amp; &#39;Jerry&#39;&lt;/a&gt;");
  CHECK(attn::formula_html("Q = X · W_q   (one row per position)") ==
        "Q = X · W_q <span class=\"comment\">(one row per position)</span>");
  CHECK(attn::formula_html("x < y") == "x &lt; y");
  CHECK(attn::preformatted("a\n  b\n\n") == "a\n  b");
}

TEST_CASE("a matrix is one table, its numbers in the one format NumPy chooses for the array", "[html]") {
  attn::Tensor t({2, 3}, {"S", "N"});
  t.data = {0.5, -1.25, 2, 3, 0.125, -std::numeric_limits<double>::infinity()};
  const std::string html = attn::tensor_tables(t, "x", {});
  CHECK(html ==
        "<table class=\"tensor\"><thead><tr><th class=\"corner\">S \\ N</th><th>0</th><th>1</th><th>2</th></tr>"
        "</thead><tbody>\n"
        "<tr><th>0</th><td>0.5</td><td>-1.25</td><td>2.</td></tr>\n"
        "<tr><th>1</th><td>3.</td><td>0.125</td><td>-inf</td></tr>\n"
        "</tbody></table>\n");
  attn::ArrayFormatOptions integers;
  integers.integers = true;
  const attn::Tensor ids = counting({3}, {"S"});
  CHECK(attn::tensor_tables(ids, "ids", integers).find("<tr><th></th><td>0</td><td>1</td><td>2</td></tr>") !=
        std::string::npos);
}

TEST_CASE("a tensor of more axes is a table per matrix, captioned with its index", "[html]") {
  const std::string html = attn::tensor_tables(counting({2, 2, 2, 3}, {"B", "H", "S", "d"}), "Q_heads", {});
  CHECK(count(html, "<table class=\"tensor\">") == 4);
  CHECK(html.find("<caption>Q_heads[1][0]</caption>") != std::string::npos);
  // Q_heads[1][0] starts at element (1*2 + 0) * 6 = 12.
  CHECK(html.find("<caption>Q_heads[1][0]</caption><thead><tr><th class=\"corner\">S \\ d</th><th>0</th><th>1</th>"
                  "<th>2</th></tr></thead><tbody>\n<tr><th>0</th><td>12.</td><td>13.</td><td>14.</td></tr>") !=
        std::string::npos);
}

TEST_CASE("past NumPy's threshold a tensor is summarized like the terminal, and shown whole folded", "[html]") {
  const attn::Tensor t = counting({10, 200}, {"S", "N"});  // 2000 elements > 1000
  const std::string summary = attn::tensor_tables(t, "big", {});
  CHECK(count(summary, "<td>") == 36);  // 6 rows of 6 numbers
  CHECK(summary.find("<th>2</th><th class=\"gap\">…</th><th>197</th>") != std::string::npos);
  CHECK(summary.find("<tr class=\"gap\"><th>⋮</th><td colspan=\"7\">⋮</td></tr>\n<tr><th>7</th>") != std::string::npos);
  CHECK(summary.find("<td>1999.</td>") != std::string::npos);
  CHECK(summary.find("<td>1000.</td>") == std::string::npos);

  const std::string figure = attn::tensor_figure({t, "big", "", false, true}, "stats line", {});
  CHECK(figure.find("<p class=\"stats\">stats line</p>") != std::string::npos);
  CHECK(figure.find("<summary>the whole tensor: all 2000 numbers</summary>") != std::string::npos);
  CHECK(figure.find("<td>1000.</td>") != std::string::npos);  // in the folded whole

  const attn::Tensor huge = counting({200, 101}, {"S", "N"});  // 20200 > kWholeTensorLimit
  const std::string too_big = attn::tensor_figure({huge, "huge", "", false, false}, "", {});
  CHECK(too_big.find("<details") == std::string::npos);
  CHECK(too_big.find("(the whole tensor, 20200 numbers, is too large for the page: --dump writes it)") !=
        std::string::npos);
}

TEST_CASE("labelled matrices and top-k rows", "[html]") {
  attn::Tensor m({1, 2}, {"S", "T"});
  m.data = {1.5, 0.25};
  CHECK(attn::labeled_matrix("head 0:", m, {"Q:\"I\""}, {"K:\"I\"", "K:\"AI\""}, 4) ==
        "<div class=\"scroll\"><table class=\"labeled\"><caption>head 0:</caption><thead><tr><th></th>"
        "<th>K:&quot;I&quot;</th><th>K:&quot;AI&quot;</th></tr></thead><tbody>\n"
        "<tr><th>Q:&quot;I&quot;</th><td>1.5</td><td>0.25</td></tr>\n</tbody></table></div>\n");
  attn::TopKView top;
  top.caption = "top 2 next tokens:";
  top.row_labels = {"0 after \"I\":"};
  top.rows = {{{"\"love\"", 0.61234}, {"\"AI\"", 0.2}}};
  top.decimals = 3;
  CHECK(attn::top_k_table(top).find("<tr><th>0 after &quot;I&quot;:</th><td><span class=\"token\">&quot;love&quot;"
                                    "</span> 0.612</td><td><span class=\"token\">&quot;AI&quot;</span> 0.200</td>") !=
        std::string::npos);
}
