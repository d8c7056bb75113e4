// The memory estimate is the model's own program run on shapes alone (attn/run_memory.h):
// that run records what the real run records, entry for entry and shape for shape, with no
// numbers; and the estimate it sums, worked by hand.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "arch/checkpoint.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/generate.h"
#include "attn/model_file.h"
#include "attn/run_memory.h"
#include "core/shape_only.h"
#include "forward/program.h"
#include "model/examples.h"
#include "steps/attention.h"
#include "steps/projection.h"
#include "tokenizers/word_tokenizer.h"

namespace {

using Records = std::vector<std::pair<std::string, attn::Shape>>;

// Every record of a run of `model` on `input` (its name and shape as recorded), and in
// `numbers` whether each had numbers.
Records records_of(const attn::Model& model, const attn::RunInput& input, std::vector<bool>* numbers = nullptr) {
  Records out;
  attn::Trace trace(!input.batched);
  trace.keep_entries(false);
  trace.set_sink([&](const attn::TraceRecord& r) {
    out.emplace_back(r.name, r.shape);
    if (numbers) numbers->push_back(r.data != nullptr);
  });
  attn::run_model(model, input, trace);
  return out;
}

// The same on shapes alone, the input's numbers X as shapes too.
Records shape_records_of(const attn::Model& model, attn::RunInput input, std::vector<bool>& numbers) {
  const attn::ShapesOnly shapes_only;
  if (input.X.has_values()) input.X = attn::shape_only(input.X.shape, input.X.axes);
  if (input.target_X.has_values()) input.target_X = attn::shape_only(input.target_X.shape, input.target_X.axes);
  return records_of(model, input, &numbers);
}

attn::LoadedModel example(const std::string& name) {
  const attn::BundledExample& e = attn::find_example(name);
  return attn::load_model_text(e.json, std::string("example ") + e.name, attn::LoadOptions{});
}

const std::string kCheckpoints = std::string(ATTN_SOURCE_DIR) + "/tests/reference/hf_checkpoints/";
const std::string kSeq2Seq = std::string(ATTN_SOURCE_DIR) + "/tests/reference/hf_seq2seq/";

// A reference checkpoint read by words w0 ... w{V-1}, running `ids` (an encoder-decoder's
// source; its decoder reads `target`).
attn::LoadedModel checkpoint(const std::string& name, const std::vector<std::size_t>& ids,
                             const std::string& folder = kCheckpoints, const std::vector<std::size_t>& target = {}) {
  attn::CheckpointModel c = attn::load_hf_model(folder + name);
  attn::LoadedModel loaded;
  loaded.model = std::move(c.model);
  std::vector<std::string> words;
  for (std::size_t i = 0; i < c.vocab_size; ++i) words.push_back("w" + std::to_string(i));
  loaded.model.vocab = attn::Vocabulary(words);
  loaded.model.tokenizer = std::make_shared<const attn::WordTokenizer>(loaded.model.vocab);
  loaded.input.batched = false;
  loaded.input.source_tokens.json_path = "test";
  loaded.input.source_tokens.tokens.emplace_back();
  for (const std::size_t id : ids) loaded.input.source_tokens.tokens[0].push_back(words.at(id));
  if (!target.empty()) {
    loaded.input.target_tokens.tokens.emplace_back();
    for (const std::size_t id : target) loaded.input.target_tokens.tokens[0].push_back(words.at(id));
  }
  return loaded;
}

void same_records(const attn::Model& model, const attn::RunInput& input) {
  std::vector<bool> numbers;
  const Records real = records_of(model, input);
  const Records shapes = shape_records_of(model, input, numbers);
  REQUIRE(shapes.size() == real.size());
  for (std::size_t i = 0; i < real.size(); ++i) {
    INFO(real[i].first);
    CHECK(shapes[i] == real[i]);
  }
  // (the token ids are looked up for real, and RoPE's d/2 frequencies computed: they are
  // small, and the steps read them, the embedding's lookup and the rotation's shape rule)
  for (std::size_t i = 0; i < shapes.size(); ++i)
    if (shapes[i].first.find("tokens.ids") == std::string::npos && shapes[i].first != "rope.inv_freq") {
      INFO(shapes[i].first);
      CHECK_FALSE(numbers[i]);
    }
}

// Every reference checkpoint the case lists name: the decoders' (cases.txt), BERT's
// (bert_cases.txt), and the same models read from pytorch_model.bin (the first name of each
// line of bin_cases.txt and bert_bin_cases.txt).
std::vector<std::string> reference_checkpoints() {
  std::vector<std::string> names;
  for (const char* list : {"cases.txt", "bert_cases.txt", "bin_cases.txt", "bert_bin_cases.txt"}) {
    std::ifstream lines(kCheckpoints + list);
    REQUIRE(lines);
    for (std::string line; std::getline(lines, line);)
      if (!line.empty()) names.push_back(line.substr(0, line.find(' ')));
  }
  return names;
}

// The encoder-decoders' reference checkpoints (hf_seq2seq/cases.txt: Marian, BART).
std::vector<std::string> seq2seq_checkpoints() {
  std::vector<std::string> names;
  std::ifstream lines(kSeq2Seq + "cases.txt");
  REQUIRE(lines);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) names.push_back(line.substr(0, line.find(' ')));
  return names;
}

// The logit lens on, and head 0 of the last stack's first layer ablated.
void with_lens_and_ablation(attn::LoadedModel& loaded) {
  loaded.input.lens = true;
  const attn::Stack stack = loaded.model.has_decoder() ? attn::Stack::Decoder : attn::Stack::Encoder;
  loaded.input.ablation.heads.push_back(attn::HeadAblation{stack, 0, 0});
}

}  // namespace

TEST_CASE("a step on shapes alone gives its result's shape and no numbers", "[run_memory]") {
  const attn::Tensor q = attn::shape_only({2, 3, 5, 4}, {"B", "H", "S", "d"});
  const attn::Tensor k_t = attn::shape_only({2, 3, 4, 7}, {"B", "H", "d", "T"});
  attn::Tensor W({4, 6}, {"N", "H*d"});
  const attn::ShapesOnly shapes_only;
  const attn::Tensor scores = attn::attention_scores(q, k_t);
  CHECK(scores.shape == attn::Shape{2, 3, 5, 7});
  CHECK(scores.axes == attn::AxisNames{"B", "H", "S", "T"});
  CHECK(scores.data.empty());
  const attn::Tensor x = attn::shape_only({2, 5, 4}, {"B", "S", "N"});
  const attn::Tensor p = attn::linear_projection(x, W, attn::Tensor(), "H*d");
  CHECK(p.shape == attn::Shape{2, 5, 6});
  CHECK(p.data.empty());
  // the shape rules still hold: a product of mismatched shapes is refused as it always was
  CHECK_THROWS_AS(attn::attention_scores(q, attn::shape_only({2, 3, 5, 7}, {})), attn::InternalError);
}

TEST_CASE("a run on shapes alone records what the real run records, shape for shape", "[run_memory]") {
  for (const attn::BundledExample& e : attn::bundled_examples()) {
    DYNAMIC_SECTION(e.name) {
      attn::LoadedModel loaded = example(e.name);
      same_records(loaded.model, loaded.input);
      if (loaded.model.output.present) {  // the logit lens, and an ablation of a head
        loaded.input.lens = true;
        const attn::Stack stack = loaded.model.encoder.empty() ? attn::Stack::Decoder : attn::Stack::Encoder;
        loaded.input.ablation.heads.push_back(attn::HeadAblation{stack, 0, 1});
        same_records(loaded.model, loaded.input);
      }
    }
  }
  for (const std::string& name : reference_checkpoints()) {
    DYNAMIC_SECTION(name) {
      attn::LoadedModel loaded = checkpoint(name, {1, 5, 2, 7});
      same_records(loaded.model, loaded.input);
      if (loaded.model.output.present) {  // the lens (BERT's through its head transform), an ablation
        with_lens_and_ablation(loaded);
        same_records(loaded.model, loaded.input);
      }
    }
  }
  // Marian's sinusoidal table and decoder heads, SiLU, BART's per-stack embedding norms,
  // scores times d^-0.5, the biased tied head: a source of 4 tokens, a target of 3
  for (const std::string& name : seq2seq_checkpoints()) {
    DYNAMIC_SECTION(name) {
      attn::LoadedModel loaded = checkpoint(name, {1, 5, 2, 7}, kSeq2Seq, {2, 4, 6});
      REQUIRE(loaded.model.has_target());
      same_records(loaded.model, loaded.input);
      with_lens_and_ablation(loaded);
      same_records(loaded.model, loaded.input);
    }
  }
}

namespace {

// The records of a cached step of `loaded` (its prompt's run filling the cache, then the
// next position's step), on shapes alone or not.
Records cached_step_records(const attn::LoadedModel& loaded, bool shapes) {
  const attn::Model& model = loaded.model;
  const std::unique_ptr<attn::ShapesOnly> alone = shapes ? std::make_unique<attn::ShapesOnly>() : nullptr;
  std::vector<attn::LayerCache> caches(model.decoder.size());
  attn::RunContext context;
  context.cache = &caches;
  attn::Trace prompt(!loaded.input.batched);
  prompt.keep_entries(false);
  attn::run_program(model, loaded.input, prompt, context);
  Records out;
  attn::Trace step(true);
  step.keep_entries(false);
  step.set_sink([&](const attn::TraceRecord& r) { out.emplace_back(r.name, r.shape); });
  context.step = true;
  context.position = caches[0].k.length();
  attn::Program run(model, 3, step, context);
  attn::run_forward(model, run);
  return out;
}

}  // namespace

TEST_CASE("a cached step on shapes alone records what the real step records", "[run_memory][kv_cache]") {
  for (const char* name : {"llama_block", "seed004_i_love_ai"}) {
    DYNAMIC_SECTION(name) {
      const attn::LoadedModel loaded = example(name);
      const Records real = cached_step_records(loaded, false);
      CHECK(real.size() > 10);
      CHECK(cached_step_records(loaded, true) == real);
    }
  }
  // the decoder families' own steps: GPT-Neo's local layers and Mistral's window cut the
  // cached keys (windows of 2 and 3: the step at position 6 sees 2 or 3 of 7), GPT-NeoX and
  // Phi turn part of each head, Gemma's GeGLU and norms
  for (const char* name : {"gpt_neo_f32", "gpt_neo_bf16_local_first", "mistral_window_f32", "gpt_neox_f32",
                           "gpt_neox_f64_sequential", "gemma_f32", "phi_f16_gqa"}) {
    DYNAMIC_SECTION(name) {
      const attn::LoadedModel loaded = checkpoint(name, {1, 5, 2, 7, 3, 3});
      const Records real = cached_step_records(loaded, false);
      CHECK(real.size() > 10);
      CHECK(cached_step_records(loaded, true) == real);
    }
  }
  // an encoder-decoder's step: Marian's table row and decoder heads, BART's embedding norm,
  // cross-attention to the cached encoder output
  for (const char* name : {"marian_f32_decoder_heads", "marian_f32_table_d6", "bart_bf16_scaled"}) {
    DYNAMIC_SECTION(name) {
      const attn::LoadedModel loaded = checkpoint(name, {1, 5, 2, 7}, kSeq2Seq, {2, 4, 6});
      const Records real = cached_step_records(loaded, false);
      CHECK(real.size() > 10);
      CHECK(cached_step_records(loaded, true) == real);
    }
  }
}

TEST_CASE("attn patch's head on shapes alone records what its real head records", "[run_memory]") {
  // RunContext::head_ids: the logits of two ids alone at the last row, (B,1,2)
  const std::vector<std::size_t> ids = {3, 9};
  for (const char* name : {"gpt2_f32", "gpt2_f32_untied", "bert_mlm_f32"}) {
    DYNAMIC_SECTION(name) {
      const attn::LoadedModel loaded = checkpoint(name, {1, 5, 2, 7});
      const auto head_records = [&](bool shapes) {
        const std::unique_ptr<attn::ShapesOnly> alone = shapes ? std::make_unique<attn::ShapesOnly>() : nullptr;
        Records out;
        attn::Trace trace(true);
        trace.keep_entries(false);
        trace.set_sink([&](const attn::TraceRecord& r) { out.emplace_back(r.name, r.shape); });
        attn::RunContext context;
        context.head_ids = &ids;
        attn::run_program(loaded.model, loaded.input, trace, context);
        return out;
      };
      const Records real = head_records(false);
      REQUIRE_FALSE(real.empty());
      CHECK(real.back() == Records::value_type("output.logits", attn::Shape{1, 2}));  // (T=1,k=2), one text
      CHECK(head_records(true) == real);
    }
  }
}

TEST_CASE("the estimate, worked by hand for one attention block", "[run_memory]") {
  // d_model 8, 2 heads of d = 4, no biases, X of 4 positions. Every count is what malloc
  // hands out (a block's usable size: the request and its 8-byte header rounded up to 16,
  // less the header), as heap_peak.cpp measures it:
  // - each weight, W_q, W_k, W_v, W_o of 8 x 8: its 512 bytes of numbers in a block of 520,
  //   its shape's 2 sizes in 24, its 2 axis names (std::string, 32 bytes each, the names
  //   short enough to stay inline) in 72: 616, four of them 2464;
  // - the records: the input (4,8), then the block's q, k, v, q_heads, k_heads, v_heads,
  //   k_t, scores, scaled, weights, context, concat and output, 14 of 32 numbers (256 bytes
  //   in a block of 264). Six have two axes (the input, q, k, v, concat, output: 264 + 24 +
  //   72 = 360 each) and eight three (the heads' (H,S,d) and (H,S,S): 264 + 24 + 104 = 392
  //   each): 2160 + 3136 = 5296;
  // - the tape when the block's last record is made: its one entry so far (the input) in a
  //   vector that may hold twice as many, 2 x sizeof(TapeEntry);
  // - a kept entry besides its tensor: its place in the trace's vector, which may hold twice
  //   as many, 2 x sizeof(TraceEntry) (2 x 168 on x86-64 glibc); its name past the 15 bytes a
  //   string keeps inline ("encoder.0.attention.q", 21 bytes: 24; "...q_heads", 27: 40;
  //   "...k_t", 23: 24; the others 26 to 33: 40; "input": none); its operands (112 bytes each)
  //   in one block (one: 120, two: 232), and each operand's name as above, its shape and its
  //   axes (two axes: 24 + 72, three: 24 + 104). The input 336; q, k, v 336 + 24 + 232 + 96
  //   (the input) + 96 (W_q) = 784 each; q_heads, k_heads, v_heads 336 + 40 + 120 + 24 + 96
  //   = 616; k_t 336 + 24 + 120 + 40 + 128 = 648; scores 336 + 40 + 232 + (40 + 128) +
  //   (24 + 128) = 928; scaled_scores, weights and concat 336 + 40 + 120 + 40 + 128 = 664;
  //   context 336 + 40 + 232 + 2 x (40 + 128) = 944; output 336 + 40 + 232 + (40 + 96) + 96
  //   = 840: 9888 for the 14.
  const attn::LoadedModel loaded = attn::load_model_text(
      R"({"model": {"d_model": 8, "num_heads": 2}, "input": {"X": {"randn": [4, 8]}},
          "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn", "W_o": "randn"}}]})",
      "m.json");
  const auto estimate = [&](attn::RunPlan::Kept kept) {
    attn::RunPlan plan;
    plan.kept = kept;
    return attn::estimate_run_memory(loaded.model, loaded.input, plan);
  };
  REQUIRE(sizeof(attn::TraceEntry) == 168);  // as worked above
  REQUIRE(sizeof(attn::Operand) == 112);
  const std::uint64_t program = 292 * 1024, weights = 4 * 616, records = 6 * 360 + 8 * 392,
                      tape = 2 * sizeof(attn::TapeEntry), entries = 9888;
  // A trace that keeps nothing holds at most the block's 13 results and the input it reads.
  CHECK(estimate(attn::RunPlan::Kept::Nothing) == program + weights + records + tape);
  // Kept, the 14 entries are held twice at the block's end (the trace's copies and the
  // block's own), and the entries' names and operands. One layer: a streamed walkthrough
  // forgets nothing.
  CHECK(estimate(attn::RunPlan::Kept::Everything) == program + weights + 2 * records + tape + entries);
  CHECK(estimate(attn::RunPlan::Kept::Streamed) == program + weights + 2 * records + tape + entries);
  // attn heads keeps the attention weights beside: (H=2,S=4,S=4), 392, and their entry, 664.
  CHECK(estimate(attn::RunPlan::Kept::AttentionWeights) == program + weights + records + tape + 392 + 664);
}
