#include "attn/trace.h"

#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/forward.h"
#include "attn/model_file.h"
#include "model/presets.h"

using attn::Tensor;

namespace {
// Two entries of encoder layer 0's attention block.
const attn::StepId kQ{attn::StepKind::Query, attn::Sequence::Source, attn::Stack::Encoder, 0,
                      attn::Block::SelfAttention};
const attn::StepId kScores{attn::StepKind::Scores, attn::Sequence::Source, attn::Stack::Encoder, 0,
                           attn::Block::SelfAttention};
const attn::StepId kInput{attn::StepKind::Input};
}  // namespace

TEST_CASE("a trace keeps every record in order, the B axis dropped for unbatched runs", "[trace]") {
  attn::Trace trace(true);
  Tensor x({1, 2, 3}, {"B", "S", "N"});
  x.data = {1, 2, 3, 4, 5, 6};
  trace.record(kInput, x);
  trace.record(kQ, x, {trace.operand(kInput, x)});
  REQUIRE(trace.entries().size() == 2);
  CHECK(trace.entries()[0].name == "input");
  CHECK(trace.entries()[0].tensor.shape == attn::Shape{2, 3});
  CHECK(trace.entries()[0].tensor.axes == attn::AxisNames{"S", "N"});
  CHECK(trace.entries()[1].name == "encoder.0.attention.q");
  CHECK(trace.entries()[1].operands[0].shape == attn::Shape{2, 3});
  CHECK(trace.entries()[1].operands[0].name == "input");
  CHECK(*trace.entries()[1].operands[0].entry == kInput);
  CHECK(trace.find(kQ)->tensor.data == x.data);
  CHECK(trace.find(kScores) == nullptr);
}

TEST_CASE("a sink sees each record as it is made, without the trace keeping it", "[trace]") {
  attn::Trace trace(true);
  trace.keep_entries(false);
  std::vector<std::string> seen;
  const double* seen_data = nullptr;
  attn::Shape seen_shape;
  Tensor x({1, 2, 2}, {"B", "S", "N"});
  x.data = {1, 2, 3, 4};
  trace.set_sink([&](const attn::TraceRecord& r) {
    seen.push_back(r.name);
    seen_data = r.data;
    seen_shape = r.shape;
  });
  trace.record(kInput, x);
  trace.record(kQ, x);
  CHECK(seen == std::vector<std::string>{"input", "encoder.0.attention.q"});
  CHECK(seen_data == x.data.data());  // borrowed, not copied
  CHECK(seen_shape == attn::Shape{2, 2});
  CHECK(trace.entries().empty());
  CHECK_FALSE(trace.keeps_entries());
}

TEST_CASE("every documented trace name is made from its step id", "[trace][names]") {
  using attn::Block;
  using attn::Sequence;
  using attn::Stack;
  using attn::StepKind;
  const auto name = [](StepKind kind, Sequence sequence, Stack stack = Stack::None, int layer = -1,
                       Block block = Block::None, int number = 0) {
    return attn::trace_name(attn::StepId{kind, sequence, stack, layer, block, number});
  };
  // docs/trace-names.md, before the layers
  CHECK(name(StepKind::TokenIds, Sequence::Source) == "tokens.ids");
  CHECK(name(StepKind::PaddingMask, Sequence::Target) == "target_tokens.padding_mask");
  CHECK(name(StepKind::EmbeddingLookup, Sequence::Source) == "embedding.lookup");
  CHECK(name(StepKind::ScaledEmbedding, Sequence::Target) == "target_embedding.scaled");
  CHECK(name(StepKind::PositionalEncoding, Sequence::Source) == "embedding.positional");
  CHECK(name(StepKind::Input, Sequence::Target) == "target_input");
  CHECK(name(StepKind::Mask, Sequence::Source, Stack::Encoder, -1, Block::SelfAttention) == "encoder.mask");
  CHECK(name(StepKind::Mask, Sequence::Target, Stack::Decoder, -1, Block::MaskedSelfAttention) == "decoder.self_mask");
  CHECK(name(StepKind::Mask, Sequence::Target, Stack::Decoder, -1, Block::CrossAttention) == "decoder.cross_mask");
  // in the layers
  CHECK(name(StepKind::KeyHeads, Sequence::Source, Stack::Encoder, 3, Block::SelfAttention) ==
        "encoder.3.attention.k_heads");
  CHECK(name(StepKind::TransposedKeys, Sequence::Target, Stack::Decoder, 0, Block::MaskedSelfAttention) ==
        "decoder.0.self_attention.k_t");
  CHECK(name(StepKind::AttentionWeights, Sequence::Target, Stack::Decoder, 1, Block::CrossAttention) ==
        "decoder.1.cross_attention.weights");
  CHECK(name(StepKind::MergedHeads, Sequence::Source, Stack::Encoder, 0, Block::SelfAttention) ==
        "encoder.0.attention.concat");
  CHECK(name(StepKind::OutputProjection, Sequence::Source, Stack::Encoder, 0, Block::SelfAttention) ==
        "encoder.0.attention.output");
  CHECK(name(StepKind::Residual, Sequence::Target, Stack::Decoder, 0, Block::None, 3) == "decoder.0.residual3");
  CHECK(name(StepKind::AddNorm, Sequence::Source, Stack::Encoder, 2, Block::None, 1) == "encoder.2.add_norm1");
  CHECK(name(StepKind::PreNorm, Sequence::Source, Stack::Encoder, 2, Block::None, 2) == "encoder.2.norm2");
  CHECK(name(StepKind::FfnHidden, Sequence::Source, Stack::Encoder, 0, Block::FeedForward) == "encoder.0.ffn.hidden");
  CHECK(name(StepKind::FfnOutput, Sequence::Target, Stack::Decoder, 5, Block::FeedForward) == "decoder.5.ffn.output");
  CHECK(name(StepKind::LayerOutput, Sequence::Source, Stack::Encoder, 0) == "encoder.0.output");
  // after the layers
  CHECK(name(StepKind::FinalNorm, Sequence::Target, Stack::Decoder) == "decoder.norm");
  CHECK(name(StepKind::Logits, Sequence::Target) == "output.logits");
  CHECK(name(StepKind::Probabilities, Sequence::Source) == "output.probabilities");
  CHECK(attn::layer_name(attn::StepId{StepKind::Scores, Sequence::Source, Stack::Encoder, 12}) == "encoder.12");
  CHECK(attn::layer_name(attn::StepId{StepKind::Input}).empty());
}

TEST_CASE("the layer and step options read trace names back", "[trace][names]") {
  const auto layer = attn::parse_layer_selection("decoder.2");
  REQUIRE(layer);
  CHECK(layer->stack == attn::Stack::Decoder);
  CHECK(layer->layer == 2);
  const attn::StepId decoder_2{attn::StepKind::Scores, attn::Sequence::Target, attn::Stack::Decoder, 2};
  const attn::StepId encoder_2{attn::StepKind::Scores, attn::Sequence::Source, attn::Stack::Encoder, 2};
  CHECK(layer->selects(decoder_2));
  CHECK_FALSE(layer->selects(encoder_2));
  const auto any = attn::parse_layer_selection("2");
  REQUIRE(any);
  CHECK_FALSE(any->stack);
  CHECK(any->selects(encoder_2));
  CHECK(any->selects(decoder_2));
  for (const char* bad : {"", "foo.0", "encoder.", "encoder.x", "-1", "01", "encoder.1.attention"})
    CHECK_FALSE(attn::parse_layer_selection(bad));
  CHECK(attn::step_kind_of_suffix("scaled_scores") == attn::StepKind::ScaledScores);
  CHECK(attn::step_kind_of_suffix("weights") == attn::StepKind::AttentionWeights);
  CHECK(attn::step_kind_of_suffix("output.logits") == attn::StepKind::Logits);
  CHECK(attn::step_kind_of_suffix("q_rope") == attn::StepKind::RotatedQueries);
  CHECK(attn::step_kind_of_suffix("v_repeat") == attn::StepKind::RepeatedValues);
  const attn::StepId k_rope{attn::StepKind::RotatedKeys, attn::Sequence::Source, attn::Stack::Encoder, 1,
                            attn::Block::SelfAttention};
  CHECK(attn::trace_name(k_rope) == "encoder.1.attention.k_rope");
  const attn::StepId v_repeat{attn::StepKind::RepeatedValues, attn::Sequence::Target, attn::Stack::Decoder, 0,
                              attn::Block::CrossAttention};
  CHECK(attn::trace_name(attn::gradient_of(v_repeat)) == "grad.decoder.0.cross_attention.v_repeat");
  CHECK_FALSE(attn::step_kind_of_suffix("scores"));  // a step kind of its own, not an alias
}

TEST_CASE("a run that discards its values computes the same numbers as one that keeps them", "[trace]") {
  // 2 x 4 heads x 100 x 100 = 80,000 scores a layer: the one-pass kernel (kExactMaxElements),
  // which then writes no scaled scores (Trace::discards_values)
  const attn::LoadedModel m =
      attn::load_model_text(attn::model_file_text(attn::ModelSize{16, 4, 32, 2, 100, 2, 3}, "", "test"), "m.json");
  attn::Trace keeping;
  const Tensor kept = attn::run_model(m.model, m.input, keeping);
  attn::Trace discarding;
  discarding.keep_entries(false);
  CHECK(discarding.discards_values());
  CHECK_FALSE(keeping.discards_values());
  const Tensor discarded = attn::run_model(m.model, m.input, discarding);
  REQUIRE(kept.shape == discarded.shape);
  CHECK(std::memcmp(kept.data.data(), discarded.data.data(), kept.size() * sizeof(double)) == 0);
  const attn::TraceEntry* scaled = nullptr;
  for (const attn::TraceEntry& e : keeping.entries())
    if (e.id.kind == attn::StepKind::ScaledScores) scaled = &e;
  REQUIRE(scaled != nullptr);
  CHECK(scaled->tensor.data.size() == 80000);
}
