#include "present/explanations.h"

#include <string>

#include <catch2/catch.hpp>

#include "attn/trace.h"
#include "present/terminal.h"

namespace {

// The step kinds issue 4 asks to explain (and tokenize from issue 3), spelled as callers use
// them, in the order of the table of step kinds (attn/step_kinds.def) that holds the texts.
const std::vector<std::string_view> kRequired = {"tokenize",
                                                 "subword_tokenize",
                                                 "padding_mask",
                                                 "embedding",
                                                 "token_type",
                                                 "positional_encoding",
                                                 "learned_positions",
                                                 "sinusoidal_table",
                                                 "input",
                                                 "embedding_norm",
                                                 "rope_frequencies",
                                                 "causal_mask",
                                                 "sliding_window",
                                                 "local_attention",
                                                 "projection_q",
                                                 "projection_k",
                                                 "projection_v",
                                                 "bias",
                                                 "split_heads",
                                                 "multiple_heads",
                                                 "qk_norm",
                                                 "rope",
                                                 "partial_rope",
                                                 "repeat_kv",
                                                 "transpose_k",
                                                 "scores",
                                                 "scale",
                                                 "unscaled_scores",
                                                 "softmax",
                                                 "context",
                                                 "ablation",
                                                 "merge_heads",
                                                 "output_projection",
                                                 "residual",
                                                 "layer_norm",
                                                 "rms_norm",
                                                 "rms_norm_plus_one",
                                                 "feed_forward",
                                                 "swiglu",
                                                 "silu",
                                                 "geglu",
                                                 "parallel_residual",
                                                 "encoder_stack",
                                                 "decoder_stack",
                                                 "decoder_only_stack",
                                                 "decoder_self_attention",
                                                 "bidirectional_self_attention",
                                                 "cross_attention",
                                                 "head_transform",
                                                 "output_softmax",
                                                 "masked_lm",
                                                 "logit_lens",
                                                 "loss",
                                                 "backward"};

}  // namespace

TEST_CASE("every step kind has an explanation, and nothing else does", "[explanations]") {
  for (const auto kind : kRequired) {
    INFO(std::string(kind));
    const char* text = attn::explanation_for(kind);
    REQUIRE(text != nullptr);
    CHECK(std::string(text).size() > 80);  // a few real sentences, not a placeholder
  }
  CHECK(attn::explained_step_kinds() == kRequired);
  CHECK(attn::explanation_for("") == nullptr);
  CHECK(attn::explanation_for("Softmax") == nullptr);
  CHECK(attn::explanation_for("attention") == nullptr);
}

TEST_CASE("every row of the table of step kinds names a text the table holds", "[explanations]") {
  // The rows' explanation keys (attn/step_kinds.def) and their texts
  // (present/explanations.def) live in two files: a row naming a key without its text would
  // print no "why".
  for (std::size_t i = 0; i < attn::kStepKindCount; ++i) {
    const attn::StepKindRow& row = attn::step_kind_row(static_cast<attn::StepKind>(i));
    INFO(row.trace_name);
    if (*row.explanation) CHECK(attn::explanation_for(row.explanation) != nullptr);
  }
  // and the ones the steps on the heads and projections bring (ATTN_WEIGHT_STEP rows)
  CHECK(std::string(attn::step_kind_row(attn::StepKind::NormedQueries).explanation) == "qk_norm");
  CHECK(std::string(attn::step_kind_row(attn::StepKind::BiasedValue).explanation) == "bias");
}

TEST_CASE("explanations are wrapped to at most 88 columns, without stray whitespace", "[explanations]") {
  for (const auto kind : attn::explained_step_kinds()) {
    const std::string text = attn::explanation_for(kind);
    INFO(std::string(kind));
    CHECK(text.back() != '\n');
    std::size_t start = 0;
    while (start <= text.size()) {
      const auto end = std::min(text.find('\n', start), text.size());
      const std::string line = text.substr(start, end - start);
      INFO(line);
      CHECK(attn::display_width(line) <= attn::kExplanationWidth);
      CHECK(!line.empty());
      CHECK(line.back() != ' ');
      CHECK(line.front() != ' ');
      start = end + 1;
    }
  }
}

TEST_CASE("the explanations say the things the steps are for", "[explanations]") {
  // A few facts a reader should get from the text; a rewrite must keep them.
  CHECK(std::string(attn::explanation_for("scale")).find("√d") != std::string::npos);
  CHECK(std::string(attn::explanation_for("softmax")).find("largest score is subtracted") != std::string::npos);
  CHECK(std::string(attn::explanation_for("causal_mask")).find("-inf") != std::string::npos);
  CHECK(std::string(attn::explanation_for("cross_attention")).find("encoder") != std::string::npos);
  CHECK(std::string(attn::explanation_for("split_heads")).find("Nothing is computed") != std::string::npos);
  // A decoder layer is not an encoder layer: it has masked self-attention and cross-attention.
  const std::string decoder = attn::explanation_for("decoder_stack");
  CHECK(decoder.find("masked self-attention") != std::string::npos);
  CHECK(decoder.find("cross-attention") != std::string::npos);
  // The Kᵀ text names no sequence axes the shapes printed with it could contradict.
  CHECK(std::string(attn::explanation_for("transpose_k")).find("(S, T)") == std::string::npos);
}
