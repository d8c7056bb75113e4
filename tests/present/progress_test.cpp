#include "present/progress.h"

#include <sstream>

#include <catch2/catch.hpp>

using attn::Block;
using attn::Sequence;
using attn::Stack;
using attn::StepId;
using attn::StepKind;

namespace {
StepId in_encoder(int layer, StepKind kind) {
  return StepId{kind, Sequence::Source, Stack::Encoder, layer, Block::SelfAttention};
}
}  // namespace

TEST_CASE("the progress line names the layer, the step and how far the run is", "[progress]") {
  std::ostringstream out;
  const attn::ProgressLine line(out, 6, 6);
  CHECK(line.describe(in_encoder(2, StepKind::Scores), 0, 1.24) ==
        "attn: encoder layer 3/6 (attention.scores), 16% of the layers, 1.2 s");
  CHECK(line.describe(StepId{StepKind::FfnHidden, Sequence::Target, Stack::Decoder, 0, Block::FeedForward}, 350'200'000,
                      3.0) == "attn: decoder layer 1/6 (ffn.hidden), 50% of the layers, 3.0 s, dump 350.2 MB");
  CHECK(line.describe(StepId{StepKind::EmbeddingLookup}, 0, 0.5) == "attn: input, 0% of the layers, 0.5 s");
  // the decoder's input comes once the encoder is done
  CHECK(line.describe(StepId{StepKind::Input, Sequence::Target}, 0, 2.0) == "attn: input, 50% of the layers, 2.0 s");
  CHECK(line.describe(StepId{StepKind::FinalNorm, Sequence::Target, Stack::Decoder}, 0, 8.0) ==
        "attn: output head, 100% of the layers, 8.0 s");
  CHECK(line.describe(StepId{StepKind::Logits, Sequence::Target}, 0, 9.0) ==
        "attn: output head, 100% of the layers, 9.0 s");
}

TEST_CASE("the progress line waits half a second, redraws ten times a second and erases itself", "[progress]") {
  std::ostringstream out;
  attn::ProgressLine line(out, 2, 0);
  line.update(in_encoder(0, StepKind::Query), 0, 0.2);
  CHECK(out.str().empty());  // a quick run never shows it
  line.update(in_encoder(0, StepKind::Key), 0, 0.6);
  CHECK(out.str() == "\rattn: encoder layer 1/2 (attention.k), 0% of the layers, 0.6 s\x1b[K");
  line.update(in_encoder(1, StepKind::Query), 0, 0.65);  // too soon after the last redraw
  CHECK(out.str() == "\rattn: encoder layer 1/2 (attention.k), 0% of the layers, 0.6 s\x1b[K");
  out.str("");
  line.update(in_encoder(1, StepKind::Value), 0, 0.71);
  CHECK(out.str() == "\rattn: encoder layer 2/2 (attention.v), 50% of the layers, 0.7 s\x1b[K");
  out.str("");
  line.clear();
  CHECK(out.str() == "\r\x1b[K");
}

TEST_CASE("a caller's progress text waits and redraws as the layers' do and erases itself at the end", "[progress]") {
  std::ostringstream out;
  {
    attn::ProgressLine line(out, 12, 0);
    line.show("attn: token 1 of at most 5, 0.3 s", 0.3);
    CHECK(out.str().empty());  // a quick run never shows it
    line.show("attn: token 2 of at most 5, 0.6 s", 0.6);
    CHECK(out.str() == "\rattn: token 2 of at most 5, 0.6 s\x1b[K");
    line.show("attn: token 3 of at most 5, 0.65 s", 0.65);  // too soon after the last redraw
    CHECK(out.str() == "\rattn: token 2 of at most 5, 0.6 s\x1b[K");
    out.str("");
  }
  // a run that ends (or throws) leaves no line behind what is printed next
  CHECK(out.str() == "\r\x1b[K");
}
