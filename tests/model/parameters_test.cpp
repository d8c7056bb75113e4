#include "attn/parameters.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/model_file.h"
#include "attn/trace.h"

namespace {

const char* kModel = R"({
  "model": {"d_model": 4, "num_heads": 2, "d_ff": 6, "positional_encoding": "learned", "max_len": 4},
  "vocab": ["<PAD>", "<UNK>", "<BOS>", "a", "b"], "embedding": "randn", "positions": "randn",
  "input": {"text": "a b", "target_text": "<BOS> a"},
  "encoder": [{"attention": {"heads": [{"W_q": "randn", "W_k": "randn", "W_v": "randn"},
                                       {"W_q": "randn", "W_k": "randn", "W_v": "randn"}],
                             "W_o": "randn", "b_v": "randn"},
               "ffn": {"W_1": "randn", "W_2": "randn", "b_2": "randn"}}],
  "encoder_norm": {"gamma": "ones"},
  "decoder": "randn",
  "output": {"W": "randn"}
})";

}  // namespace

TEST_CASE("parameters() lists every weight in the model file's order, named by its path", "[parameters]") {
  attn::LoadedModel model = attn::load_model_text(kModel, "model.json");
  std::vector<std::string> names;
  std::size_t numbers = 0;
  for (const attn::Parameter& p : attn::parameters(model.model)) {
    names.push_back(attn::parameter_name(p.id));
    numbers += p.tensor->size();
  }
  const std::vector<std::string> expected = {"embedding",
                                             "positions",
                                             "encoder.0.attention.heads.0.W_q",
                                             "encoder.0.attention.heads.0.W_k",
                                             "encoder.0.attention.heads.0.W_v",
                                             "encoder.0.attention.heads.1.W_q",
                                             "encoder.0.attention.heads.1.W_k",
                                             "encoder.0.attention.heads.1.W_v",
                                             "encoder.0.attention.W_o",
                                             "encoder.0.attention.b_v",
                                             "encoder.0.norm1.gamma",
                                             "encoder.0.norm1.beta",
                                             "encoder.0.ffn.W_1",
                                             "encoder.0.ffn.W_2",
                                             "encoder.0.ffn.b_2",
                                             "encoder.0.norm2.gamma",
                                             "encoder.0.norm2.beta",
                                             "encoder_norm.gamma",
                                             "encoder_norm.beta",
                                             "decoder.0.self_attention.W_q",
                                             "decoder.0.self_attention.W_k",
                                             "decoder.0.self_attention.W_v",
                                             "decoder.0.self_attention.W_o",
                                             "decoder.0.norm1.gamma",
                                             "decoder.0.norm1.beta",
                                             "decoder.0.cross_attention.W_q",
                                             "decoder.0.cross_attention.W_k",
                                             "decoder.0.cross_attention.W_v",
                                             "decoder.0.cross_attention.W_o",
                                             "decoder.0.norm2.gamma",
                                             "decoder.0.norm2.beta",
                                             "decoder.0.ffn.W_1",
                                             "decoder.0.ffn.W_2",
                                             "decoder.0.norm3.gamma",
                                             "decoder.0.norm3.beta",
                                             "output.W"};
  CHECK(names == expected);
  // every learned number once: the heads' matrices are the fused W_q's numbers
  CHECK(numbers == attn::parameter_count(model.model));
  // the same list from a const model, pointing at the same tensors
  const attn::Model& view = model.model;
  CHECK(attn::parameters(view).size() == expected.size());
  CHECK(attn::parameters(view)[2].tensor == &model.model.encoder[0].attention.heads[0].W_q);
}

TEST_CASE("a weight's gradient is named grad.<its path>, and its id comes back from the name's id", "[parameters]") {
  const attn::ParameterId id{attn::WeightKind::W_k, attn::Stack::Decoder, 3, attn::Block::CrossAttention, 0, -1};
  CHECK(attn::trace_name(attn::weight_gradient_id(id)) == "grad.decoder.3.cross_attention.W_k");
  CHECK(attn::parameter_of(attn::weight_gradient_id(id)) == id);
  const attn::ParameterId norm{attn::WeightKind::Beta, attn::Stack::Decoder, 0, attn::Block::None, 3, -1};
  CHECK(attn::trace_name(attn::weight_gradient_id(norm)) == "grad.decoder.0.norm3.beta");
  CHECK(attn::trace_name(attn::weight_gradient_id({attn::WeightKind::OutputB})) == "grad.output.b");
  attn::StepId scores;
  scores.kind = attn::StepKind::Scores;
  scores.stack = attn::Stack::Encoder;
  scores.layer = 1;
  scores.block = attn::Block::SelfAttention;
  CHECK(attn::trace_name(attn::gradient_of(scores)) == "grad.encoder.1.attention.scores");
  attn::StepId loss;
  loss.kind = attn::StepKind::Loss;
  CHECK(attn::trace_name(loss) == "loss");
}

TEST_CASE("fuse_head_weights remakes the fused matrices from the heads' own", "[parameters]") {
  attn::LoadedModel model = attn::load_model_text(kModel, "model.json");
  attn::AttentionWeights& a = model.model.encoder[0].attention;
  a.heads[1].W_v.data[0] = 42.0;  // row 0, column 0 of head 1: column d + 0 of the fused matrix
  attn::fuse_head_weights(model.model);
  CHECK(a.W_v.data[2] == 42.0);
}
