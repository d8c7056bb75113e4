#include <catch2/catch.hpp>

#include "attn/model.h"
#include "attn/model_file.h"

TEST_CASE("parameter_count counts every weight, bias, norm and table once", "[parameter_count]") {
  // d_model 4, 2 heads of 2, d_ff 8, a vocab of 3:
  //   embedding 3x4 = 12, learned positions 5x4 = 20
  //   encoder layer 0 (full): W_q, W_k, W_v, W_o 4x4 = 64, b_q 4, norms 2 x (4 + 4) = 16,
  //     ffn W_1 4x8 + b_1 8 + W_2 8x4 = 72                                      -> 156
  //   encoder_norm 8; output W 4x3 + b 3 = 15
  const attn::LoadedModel m = attn::load_model_text(R"({
      "model": {"d_model": 4, "num_heads": 2, "d_ff": 8, "positional_encoding": "learned", "max_len": 5},
      "vocab": ["<PAD>", "I", "love"], "embedding": "randn", "positions": "randn",
      "input": {"text": "I love"},
      "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn", "b_q": "zeros"},
                   "ffn": {"W_1": "randn", "b_1": "zeros", "W_2": "randn"}}],
      "encoder_norm": {},
      "output": {"W": "randn", "b": "zeros"}})",
                                                    "model.json");
  CHECK(attn::parameter_count(m.model) == 12 + 20 + 156 + 8 + 15);
}

TEST_CASE("parameter_count: an attention-only layer has no norms, a tied head adds nothing", "[parameter_count]") {
  const attn::LoadedModel m = attn::load_model_text(R"({"model": {"d_model": 4, "num_heads": 2},
      "vocab": ["<PAD>", "I"], "embedding": "randn", "input": {"text": "I"},
      "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn"}}], "output": "tied"})",
                                                    "model.json");
  // embedding 2x4 = 8; W_q, W_k, W_v 4x4 = 48 (no W_o, no norms)
  CHECK(attn::parameter_count(m.model) == 8 + 48);
}

TEST_CASE("parameter_count of a decoder layer: two attention blocks, three norms, a feed-forward",
          "[parameter_count]") {
  const attn::LoadedModel m = attn::load_model_text(R"({"model": {"d_model": 2, "num_heads": 1, "d_ff": 3},
      "input": {"X": [[1, 2]], "target_X": [[3, 4]]}, "encoder": "randn", "decoder": "randn"})",
                                                    "model.json");
  // encoder "randn" with d_ff: attention 4 x 2x2 = 16, norms 2 x 4 = 8, ffn 2x3 + 3x2 = 12 -> 36
  // decoder "randn": attention 2 x 16 = 32, norms 3 x 4 = 12, ffn 12 -> 56
  CHECK(attn::parameter_count(m.model) == 36 + 56);
}
