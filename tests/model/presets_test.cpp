#include "model/presets.h"

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"

TEST_CASE("the presets are the seeds' size and the paper's base and big encoders", "[presets]") {
  const attn::ModelSize tiny = attn::find_preset("tiny")->size;
  CHECK(tiny.d_model == 4);
  CHECK(tiny.num_heads == 2);
  CHECK(tiny.d_ff == 8);
  CHECK(tiny.batch == 2);
  CHECK(tiny.seq_len == 6);
  const attn::ModelSize base = attn::find_preset("base")->size;  // Vaswani et al. 2017, Table 3
  CHECK((base.d_model == 512 && base.num_heads == 8 && base.d_ff == 2048 && base.num_layers == 6));
  const attn::ModelSize big = attn::find_preset("big")->size;
  CHECK((big.d_model == 1024 && big.num_heads == 16 && big.d_ff == 4096 && big.num_layers == 6));
  CHECK(attn::find_preset("huge") == nullptr);
}

TEST_CASE("a preset's model file is a few lines of xavier_uniform that load as that model", "[presets]") {
  attn::ModelSize size = attn::find_preset("base")->size;
  size.seq_len = 512;
  CHECK(attn::model_file_text(size, "base", "test") ==
        "{\n"
        "  \"comment\": \"base\",\n"
        "  \"model\": {\"d_model\": 512, \"num_heads\": 8, \"d_ff\": 2048, \"num_layers\": 6, \"seed\": 0},\n"
        "  \"input\": {\"X\": {\"randn\": [512, 512]}},\n"
        "  \"encoder\": \"xavier_uniform\"\n"
        "}\n");

  const attn::LoadedModel tiny =
      attn::load_model_text(attn::model_file_text(attn::find_preset("tiny")->size, "say \"hi\"", "test"), "tiny.json");
  CHECK(tiny.model.config.d_model == 4);
  CHECK(tiny.model.config.d_head == 2);
  CHECK(tiny.model.encoder.size() == 1);
  CHECK(tiny.model.encoder[0].full);  // attention, add & norm, feed-forward, add & norm
  CHECK(tiny.input.X.shape == attn::Shape{2, 6, 4});
  // np.random.seed(0); np.random.randn(2, 6, 4)[0, 0, 0]: X is drawn first
  CHECK(tiny.input.X.data[0] == 1.764052345967664);
  attn::Trace trace;
  CHECK(attn::run_model(tiny.model, tiny.input, trace).shape == attn::Shape{2, 6, 4});
}

TEST_CASE("no feed-forward and one sequence: attention-only layers and X of (S, N)", "[presets]") {
  attn::ModelSize size{8, 2, 0, 2, 3, 1, 7};
  const attn::LoadedModel m = attn::load_model_text(attn::model_file_text(size, "", "test"), "m.json");
  CHECK_FALSE(m.model.encoder[0].full);
  CHECK(m.model.encoder.size() == 2);
  CHECK_FALSE(m.input.batched);
  CHECK(m.model.config.seed == 7);
}

TEST_CASE("sizes that do not fit together are input errors naming the option", "[presets][errors]") {
  attn::ModelSize size = attn::find_preset("base")->size;
  size.num_heads = 7;
  CHECK_THROWS_WITH(
      attn::model_file_text(size, "", "attn init"),
      "attn init: --heads: expected a divisor of --d-model = 512 (each head gets d_model / heads columns), found 7");
  size.num_heads = 8;
  size.seq_len = 0;
  CHECK_THROWS_WITH(attn::model_file_text(size, "", "attn init"),
                    "attn init: --seq: expected a positive integer, found 0");
}
