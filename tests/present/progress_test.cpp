#include "present/progress.h"

#include <sstream>

#include <catch2/catch.hpp>

TEST_CASE("the progress line names the layer, the step and how far the run is", "[progress]") {
  std::ostringstream out;
  const attn::ProgressLine line(out, 6, 6);
  CHECK(line.describe("encoder.2.attention.scores", 0, 1.24) ==
        "attn: encoder layer 3/6 (attention.scores), 16% of the layers, 1.2 s");
  CHECK(line.describe("decoder.0.ffn.hidden", 350'200'000, 3.0) ==
        "attn: decoder layer 1/6 (ffn.hidden), 50% of the layers, 3.0 s, dump 350.2 MB");
  CHECK(line.describe("embedding.lookup", 0, 0.5) == "attn: input, 0% of the layers, 0.5 s");
  CHECK(line.describe("output.logits", 0, 9.0) == "attn: output head, 100% of the layers, 9.0 s");
}

TEST_CASE("the progress line waits half a second, redraws ten times a second and erases itself", "[progress]") {
  std::ostringstream out;
  attn::ProgressLine line(out, 2, 0);
  line.update("encoder.0.attention.q", 0, 0.2);
  CHECK(out.str().empty());  // a quick run never shows it
  line.update("encoder.0.attention.k", 0, 0.6);
  CHECK(out.str() == "\rattn: encoder layer 1/2 (attention.k), 0% of the layers, 0.6 s\x1b[K");
  line.update("encoder.1.attention.q", 0, 0.65);  // too soon after the last redraw
  CHECK(out.str() == "\rattn: encoder layer 1/2 (attention.k), 0% of the layers, 0.6 s\x1b[K");
  out.str("");
  line.update("encoder.1.attention.v", 0, 0.71);
  CHECK(out.str() == "\rattn: encoder layer 2/2 (attention.v), 50% of the layers, 0.7 s\x1b[K");
  out.str("");
  line.clear();
  CHECK(out.str() == "\r\x1b[K");
}
