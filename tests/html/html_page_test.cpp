#include "html/html_page.h"

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/forward.h"
#include "attn/model_file.h"
#include "model/default_model.h"
#include "model/examples.h"

namespace {

// The untrained example on "I love AI" (seed 004's round numbers, checked by hand below), its
// decoder reading "<BOS> should more": its own greedy picks, as attn explain ran it when it
// was the built-in model.
attn::LoadedModel default_run() {
  attn::LoadedModel model =
      attn::load_model_text(attn::find_example("untrained_i_love_ai").json, "untrained_i_love_ai");
  attn::replace_source_text(model.model, model.input, "I love AI", "text");
  attn::replace_target_text(model.model, model.input, "<BOS> should more", "--target");
  return model;
}

struct Drawn {
  std::string terminal, html;
};

// The run's walkthrough drawn on the terminal and as a lesson at once, as --html does.
Drawn draw(const attn::LoadedModel& model, attn::WalkthroughOptions options) {
  attn::Trace trace(!model.input.batched);
  std::ostringstream terminal;
  attn::StringOutput html;
  attn::HtmlPage page(html, model.model, options, {"attn explain", "\"I love AI\""});
  attn::StreamingWalkthrough walkthrough(terminal, trace, model.model, model.input, options, true);
  walkthrough.draw_also(page, options);
  trace.set_entry_observer([&](const attn::TraceEntry& e) { walkthrough.add(e); });
  attn::run_model(model.model, model.input, trace);
  walkthrough.finish();
  return {terminal.str(), html.text};
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The text of step `n`'s section.
std::string section(const std::string& html, int n) {
  const std::size_t start = html.find("<section class=\"step\" id=\"step-" + std::to_string(n) + "\"");
  REQUIRE(start != std::string::npos);
  return html.substr(start, html.find("</section>", start) - start);
}

// "Step 5: Query projection" for every step of attn steps' list of the run.
std::vector<std::string> listed_titles(const attn::LoadedModel& model) {
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  attn::WalkthroughOptions list;
  list.list_only = true;
  std::ostringstream out;
  attn::print_walkthrough(out, trace, model.model, model.input, list);
  std::vector<std::string> titles;
  std::istringstream lines(out.str());
  const std::regex entry("^ *([0-9]+)  [a-z_]+ +(.*)$");
  std::smatch m;
  for (std::string l; std::getline(lines, l);)
    if (std::regex_match(l, m, entry)) titles.push_back("Step " + m[1].str() + ": " + m[2].str());
  return titles;
}

}  // namespace

TEST_CASE("the lesson has every step of the run under its title, in order", "[html]") {
  const attn::LoadedModel model = default_run();
  const Drawn drawn = draw(model, {});
  const auto titles = listed_titles(model);
  REQUIRE(titles.size() == 67);
  std::size_t at = 0;
  for (const auto& title : titles) {
    INFO(title);
    const std::size_t found = drawn.html.find("<h4 class=\"step-title\">" + title + "</h4>", at);
    REQUIRE(found != std::string::npos);
    at = found;
  }
  CHECK(count(drawn.html, "<section class=\"step\"") == 67);
  CHECK(drawn.html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0) == 0);
  CHECK(drawn.html.find("<title>attn: &quot;I love AI&quot;</title>") != std::string::npos);
  // The map of the run, each stage linked to its first step.
  CHECK(drawn.html.find("<li><a href=\"#step-5\">steps 5–24</a> encoder layer 0: self-attention, feed-forward</li>") !=
        std::string::npos);
}

TEST_CASE("the lesson does not change the terminal's walkthrough", "[html]") {
  const attn::LoadedModel model = default_run();
  attn::Trace trace(!model.input.batched);
  attn::run_model(model.model, model.input, trace);
  std::ostringstream alone;
  attn::print_walkthrough(alone, trace, model.model, model.input, {});
  CHECK(draw(model, {}).terminal == alone.str());
}

TEST_CASE("the lesson's tensors, worked arithmetic and weights are the run's numbers", "[html]") {
  const std::string html = draw(default_run(), {}).html;
  const std::string q = section(html, 5);
  // Q's first row, in the format NumPy chooses for the array (as the terminal prints it).
  CHECK(q.find("<tr><th>0</th><td>1.23</td><td>0.51</td><td>1.</td><td>0.69</td></tr>") != std::string::npos);
  CHECK(q.find("<pre>Q[0][0] = X[0] · W_q[:,0]\n        = 0.1×0.1 + 1.2×0.5 + 0.3×0.2 + 1.4×0.4\n") !=
        std::string::npos);
  CHECK(q.find("<p class=\"formula\"><code>Q = X · W_q</code></p>") != std::string::npos);
  CHECK(q.find("<p class=\"shapes\"><code>(S=3,N=4) @ (N=4,H*d=4) -&gt; (S=3,H*d=4)</code></p>") != std::string::npos);
  // The softmax's weights: the first cell of head 0, with its hover text.
  CHECK(section(html, 14).find("<title>head 0: query &quot;I&quot; (0) → key &quot;I&quot; (0): weight "
                               "0.1117</title>") != std::string::npos);
}

TEST_CASE("the lesson draws one heatmap per head of every attention block, and an overview of them", "[html]") {
  const std::string html = draw(default_run(), {}).html;
  // Encoder self-attention, decoder masked self-attention, cross-attention: 3 blocks, H=2.
  CHECK(count(html, "<svg class=\"heatmap\"") == 6);
  CHECK(count(html, "<svg class=\"thumbnail\"") == 6);
  CHECK(count(html, " data-w=\"") == 6);
  for (const char* id : {"hm-14-0-0", "hm-14-0-1", "hm-40-0-0", "hm-40-0-1", "hm-55-0-0", "hm-55-0-1"}) {
    INFO(id);
    // (each figure carries its weights as data for the head and model views: data-s, data-t, data-w)
    CHECK(html.find(std::string("<figure class=\"head h-") + id[8] + "\" id=\"" + id + "\" data-s=\"") !=
          std::string::npos);
    CHECK(html.find(std::string("<a href=\"#") + id + "\"") != std::string::npos);  // from the overview
  }
  // The causal mask hides the future: the decoder's first query sees only itself.
  CHECK(count(section(html, 40), "fill=\"#d0d0d0\"") == 6);  // 3 masked cells in each head
  CHECK(html.find("<tr><th>Decoder layer 0 of 1, Cross-attention to the encoder&#39;s output <a "
                  "href=\"#step-55\">step 55</a></th>") != std::string::npos);
}

TEST_CASE("a kind of step met again keeps its title, formula and shapes in view and folds its numbers", "[html]") {
  const std::string html = draw(default_run(), {}).html;
  const std::string first = section(html, 5), again = section(html, 31);
  CHECK(first.find("<details class=\"more\">") == std::string::npos);
  CHECK(again.find("<h4 class=\"step-title\">Step 31: Key projection</h4>\n<p class=\"refs\">why: <a "
                   "href=\"#step-6\">step 6</a> · first of its kind: <a href=\"#step-6\">step 6</a></p>") ==
        std::string::npos);
  CHECK(again.find("first of its kind, with its why: <a href=\"#step-6\">step 6</a>") != std::string::npos);
  const std::size_t formula = again.find("<p class=\"formula\"><code>K = Y · W_k</code></p>");
  const std::size_t fold = again.find("<details class=\"more\"><summary>");
  REQUIRE(formula != std::string::npos);
  REQUIRE(fold != std::string::npos);
  CHECK(formula < fold);
  CHECK(again.find("worked, one element:", fold) != std::string::npos);  // worked out, folded
}

TEST_CASE("the lesson is self-contained: nothing is fetched", "[html]") {
  const std::string html = draw(default_run(), {}).html;
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find(" src=") == std::string::npos);
  CHECK(html.find("@import") == std::string::npos);
  CHECK(html.find("url(") == std::string::npos);
  // The only address is the SVG namespace, which names the elements and is never fetched.
  CHECK(count(html, "http") == count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
}

TEST_CASE("the lesson shows what the learner picked, and a batch's items each", "[html]") {
  attn::WalkthroughOptions picked;
  picked.filter = attn::parse_step_selection("14");
  picked.filter.head = 1;
  const std::string html = draw(default_run(), picked).html;
  CHECK(count(html, "<section class=\"step\"") == 1);
  CHECK(html.find("<nav class=\"map\">") == std::string::npos);  // steps picked: no map
  CHECK(count(html, "<svg class=\"heatmap\"") == 1);
  CHECK(html.find("<figcaption>head 1</figcaption>") != std::string::npos);
  CHECK(html.find("<code>weights[h=1]</code>") != std::string::npos);

  const attn::BundledExample& example = attn::find_example("seed000");
  const attn::LoadedModel batched = attn::load_model_text(example.json, "example");
  const std::string batch = draw(batched, {}).html;
  CHECK(count(batch, "<svg class=\"heatmap\"") == 4);  // B=2 items, H=2 heads
  CHECK(batch.find("Multi-head self-attention, batch item 1 <a href=\"#step-11\">step 11</a>") != std::string::npos);
}

TEST_CASE("what a printer writes reaches the page escaped, in its place", "[html]") {
  const attn::Model model = default_run().model;
  attn::StringOutput out;
  attn::WalkthroughOptions options;
  attn::HtmlPage page(out, model, options, {"attn explain", "<x> & \"y\""});
  page.start_step(1);
  page.layer_header("══ Encoder layer 0 of 1 (post-norm: LayerNorm(x + f(x))) ══");
  page.block_header("── Multi-head self-attention, H=2 heads of d=2 (d_model N=4) ──");
  page.list_entry(1, "q", "Query <projection>");
  page.note("\"zyzzyva\" is not in the vocabulary");
  page.raw("══ Backward pass ══\n");
  page.start_step(2);
  page.compact_step(2, "K = X · W_k", "(S=3,H*d=4)", 1);
  page.finish({});
  const std::string& html = out.text;
  CHECK(html.find("<title>attn: &lt;x&gt; &amp; &quot;y&quot;</title>") != std::string::npos);
  CHECK(html.find("<h2 class=\"layer\">Encoder layer 0 of 1 (post-norm: LayerNorm(x + f(x)))</h2>\n"
                  "<h3 class=\"block\">Multi-head self-attention, H=2 heads of d=2 (d_model N=4)</h3>\n"
                  "<section class=\"step\" id=\"step-1\" data-kind=\"q\">\n"
                  "<h4 class=\"step-title\">Step 1: Query &lt;projection&gt;</h4>\n"
                  "<p class=\"note\">note: &quot;zyzzyva&quot; is not in the vocabulary</p>\n"
                  "<pre class=\"raw\">══ Backward pass ══</pre>\n</section>\n") != std::string::npos);
  CHECK(
      html.find("<p class=\"formula\"><code>K = X · W_k</code> → (S=3,H*d=4) (as <a href=\"#step-1\">step 1</a>)</p>\n"
                "</section>\n</main>") != std::string::npos);
  CHECK(html.find("<nav") == std::string::npos);                         // no map given
  CHECK(html.find("<section class=\"overview\"") == std::string::npos);  // no heatmaps
}

TEST_CASE("a held page takes what follows the walkthrough, then writes it all", "[html]") {
  const attn::Model model = default_run().model;
  attn::StringOutput out;
  attn::WalkthroughOptions options;
  attn::HtmlPage page(out, model, options, {"attn generate", "\"I love AI\""});
  page.hold();
  page.start_step(1);
  page.list_entry(1, "q", "Query projection");
  page.finish({{"source", 1, 1}});
  CHECK(out.text.empty());  // held: nothing written yet
  page.layer_header("══ Token 2: \"love\" fed back at position 1; only its row is computed ══");
  attn::Tensor weights({2, 2}, {"H", "t"});
  weights.data = {0.25, 0.75, 1, 0};
  page.table("weights = softmax of each row:", weights, {"head 0", "head 1"}, {"K \"I\"", "K \"love\""});
  page.release();
  const std::string& html = out.text;
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<a href=\"#step-1\">steps 1</a> source") != std::string::npos);  // the map kept at finish()
  const std::size_t step = html.find("<h4 class=\"step-title\">Step 1: Query projection</h4>");
  const std::size_t token = html.find(
      "<h2 class=\"layer\">Token 2: &quot;love&quot; fed back at position 1; only its "
      "row is computed</h2>");
  const std::size_t table = html.find("<table class=\"labeled\"><caption>weights = softmax of each row:</caption>");
  CHECK(step != std::string::npos);
  CHECK(token != std::string::npos);
  CHECK(table != std::string::npos);
  CHECK(step < token);
  CHECK(token < table);
  CHECK(html.find("0.75") > table);
  page.release();  // once only
  CHECK(out.text.size() == html.size());
}
