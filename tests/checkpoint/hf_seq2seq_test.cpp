// Encoder-decoder checkpoints (MarianMTModel, BartForConditionalGeneration) read into attn's
// Model and run by their families' forward programs: the logits, every attention weight
// (the encoder's, the decoder's masked self-attention's, the cross-attention's), greedy
// generation through the KV cache and every weight's gradient agree with a float64
// evaluation of transformers' modeling_marian.py and modeling_bart.py and torch autograd
// (tests/reference/hf_seq2seq.py wrote the tiny checkpoints and the references, and checked
// the Marian ones once against attn's own encoder-decoder on the same weights).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include <catch2/catch.hpp>

#include "arch/checkpoint.h"
#include "attn/backward.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/generate.h"
#include "attn/model_file.h"
#include "attn/parameters.h"
#include "attn/trace.h"
#include "checkpoint/json_file.h"
#include "reference_cases.h"
#include "tokenizers/word_tokenizer.h"
#include "trace_lookup.h"

namespace {

const std::string kDir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/hf_seq2seq/";

std::vector<std::string> token_names(const std::vector<std::size_t>& ids) {
  std::vector<std::string> out;
  for (const std::size_t id : ids) out.push_back("w" + std::to_string(id));
  return out;
}

// The checkpoint's model with placeholder tokens w0 ... w{V-1} (the tokenizer's job), the
// source's ids and the decoder's input (decoder_start_token_id, then the target's ids).
attn::LoadedModel model_reading(const std::string& name, const std::vector<std::size_t>& source,
                                const std::vector<std::size_t>& decoder_input,
                                attn::CheckpointModel* checkpoint_out = nullptr) {
  attn::CheckpointModel checkpoint = attn::load_hf_model(kDir + name);
  attn::LoadedModel loaded;
  loaded.model = std::move(checkpoint.model);
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < checkpoint.vocab_size; ++i) tokens.push_back("w" + std::to_string(i));
  loaded.model.vocab = attn::Vocabulary(tokens);
  loaded.model.tokenizer = std::make_shared<const attn::WordTokenizer>(loaded.model.vocab);
  loaded.input.batched = false;
  loaded.input.source_tokens.tokens = {token_names(source)};
  loaded.input.target_tokens.tokens = {token_names(decoder_input)};
  if (checkpoint_out) *checkpoint_out = std::move(checkpoint);
  return loaded;
}

std::vector<double> flat(const attn::Json& v) {
  std::vector<double> out;
  const std::function<void(const attn::Json&)> walk = [&](const attn::Json& x) {
    if (x.is_array())
      for (const auto& y : x) walk(y);
    else
      out.push_back(x.get<double>());
  };
  walk(v);
  return out;
}

double worst_error(const std::vector<double>& expected, const std::vector<double>& actual) {
  REQUIRE(expected.size() == actual.size());
  double worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) worst = std::max(worst, std::fabs(expected[i] - actual[i]));
  return worst;
}

double worst_error(const std::vector<double>& expected, const attn::Tensor& actual) {
  return worst_error(expected, std::vector<double>(actual.data.begin(), actual.data.end()));
}

// A gradient torch gave for a stored tensor, in the layout attn reads that tensor as (the
// checkpoint name's ".T": transposed; "[a:b]": rows a..b of a table, or elements a..b of a
// (1, V) bias).
std::vector<double> as_read(const attn::Json& gradients, std::string source) {
  bool transposed = false;
  std::size_t begin = 0, end = 0;
  if (source.size() > 2 && source.compare(source.size() - 2, 2, ".T") == 0) {
    transposed = true;
    source.resize(source.size() - 2);
  } else if (!source.empty() && source.back() == ']') {
    const std::size_t open = source.rfind('['), colon = source.find(':', open);
    begin = std::stoul(source.substr(open + 1, colon - open - 1));
    end = std::stoul(source.substr(colon + 1));
    source.resize(open);
  }
  const attn::Json& g = gradients.at(source);
  const std::vector<double> values = flat(g);
  const std::size_t rows = g.size(), cols = g[0].is_array() ? g[0].size() : 1;
  if (transposed) {
    std::vector<double> out(values.size());
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c) out[c * rows + r] = values[r * cols + c];
    return out;
  }
  if (end == 0) return values;
  const std::size_t step = rows == 1 ? 1 : cols;  // (1, V): elements; a table: rows
  return std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(begin * step),
                             values.begin() + static_cast<std::ptrdiff_t>(end * step));
}

std::vector<std::size_t> ids_of(const attn::Json& v) { return v.get<std::vector<std::size_t>>(); }

}  // namespace

TEST_CASE("Marian and BART checkpoints: logits and every attention weight agree with the float64 reference",
          "[checkpoint][reference][seq2seq]") {
  const auto names = attn_test::case_names(kDir);
  REQUIRE(names.size() >= 7);
  for (const auto& name : names) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected = attn::read_json_object_file(kDir + name + "/expected.json");
      const attn::LoadedModel loaded =
          model_reading(name, ids_of(expected.at("source")), ids_of(expected.at("decoder_input")));
      attn::Trace trace(true);
      attn::run_model(loaded.model, loaded.input, trace);
      const attn::TraceEntry* logits = find_entry(trace, "output.logits");
      REQUIRE(logits != nullptr);
      const double logit_error = worst_error(flat(expected.at("logits")), logits->tensor);
      CHECK(logit_error <= 1e-12);
      double attention_error = 0;
      const attn::Json& weights = expected.at("attention_weights");
      for (const auto& [kind, pattern] : {std::pair{"encoder", "encoder.{}.attention.weights"},
                                          std::pair{"decoder_self", "decoder.{}.self_attention.weights"},
                                          std::pair{"cross", "decoder.{}.cross_attention.weights"}}) {
        const auto& layers = weights.at(kind);
        REQUIRE(layers.size() ==
                (std::string(kind) == "encoder" ? loaded.model.encoder.size() : loaded.model.decoder.size()));
        for (std::size_t i = 0; i < layers.size(); ++i) {
          std::string entry = pattern;
          entry.replace(entry.find("{}"), 2, std::to_string(i));
          const attn::TraceEntry* e = find_entry(trace, entry);
          REQUIRE(e != nullptr);
          attention_error = std::max(attention_error, worst_error(flat(layers[i]), e->tensor));
        }
      }
      CHECK(attention_error <= 1e-12);
      if (std::getenv("ATTN_TEST_REPORT"))
        WARN(name << ": worst logit error " << logit_error << ", worst attention weight error " << attention_error);
    }
  }
}

TEST_CASE("Marian and BART checkpoints: greedy generation through the KV cache agrees with the reference",
          "[checkpoint][reference][seq2seq]") {
  // The reference runs the whole prefix every step; attn runs the source and
  // decoder_start_token_id once, then one target position per step through the cache: the
  // same picks (bad_words_ids never picked), every step's logits within 1e-12, and the same
  // stop at eos_token_id.
  for (const auto& name : attn_test::case_names(kDir)) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected = attn::read_json_object_file(kDir + name + "/expected.json");
      attn::CheckpointModel checkpoint;
      const auto start = ids_of(expected.at("decoder_input"));
      const attn::LoadedModel loaded = model_reading(name, ids_of(expected.at("source")), {start[0]}, &checkpoint);
      REQUIRE(checkpoint.decoder_start_id == start[0]);
      attn::KvCacheDecoder decoder(loaded.model);
      attn::Trace prompt(true);
      prompt.keep_entries(false);
      decoder.prefill(loaded.input, prompt);
      std::size_t k = 0;
      for (const auto& step : expected.at("greedy")) {
        INFO("step " << k);
        const std::vector<double>& logits = decoder.logits();
        CHECK(worst_error(step.at("logits").get<std::vector<double>>(), logits) <= 1e-12);
        const attn::SamplingResult choice =
            attn::choose_next_token(logits.data(), logits.size(), {}, checkpoint.never_generated, nullptr);
        REQUIRE(choice.id == step.at("id").get<std::size_t>());
        ++k;
        const auto& eos = checkpoint.eos_token_ids;
        if (std::find(eos.begin(), eos.end(), choice.id) != eos.end()) break;
        attn::Trace trace(true);
        trace.keep_entries(false);
        decoder.step(choice.id, trace);
      }
      CHECK(k == expected.at("greedy").size());
    }
  }
}

TEST_CASE("Marian and BART checkpoints: every weight's gradient agrees with torch autograd",
          "[checkpoint][reference][seq2seq]") {
  // attn grad's backward (the tape of the family's program replayed) against torch's
  // autograd of the same float64 forward, the mean cross-entropy of the target shifted left:
  // the shared table's gradient sums the lookups' and the tied head's; Marian's sinusoids
  // are not learned and have none; BART's two position tables each their own.
  for (const auto& name : attn_test::case_names(kDir)) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected = attn::read_json_object_file(kDir + name + "/expected.json");
      attn::CheckpointModel checkpoint;
      attn::LoadedModel loaded =
          model_reading(name, ids_of(expected.at("source")), ids_of(expected.at("decoder_input")), &checkpoint);
      const auto labels = ids_of(expected.at("labels"));
      loaded.input.labels = attn::Tensor({1, labels.size()}, {"B", "T"});
      for (std::size_t t = 0; t < labels.size(); ++t) loaded.input.labels.data[t] = static_cast<double>(labels[t]);
      attn::Trace trace(true);
      attn::run_model(loaded.model, loaded.input, trace);
      const double loss = attn::run_backward(loaded.model, loaded.input, trace);
      CHECK(std::fabs(loss - expected.at("loss").get<double>()) <= 1e-12);
      double worst = 0;
      std::size_t checked = 0;
      for (const attn::Parameter& p : attn::parameters(loaded.model)) {
        const std::string weight = attn::parameter_name(p.id);
        INFO(weight);
        const attn::TraceEntry* g = find_entry(trace, "grad." + weight);
        REQUIRE(g != nullptr);
        const std::vector<double> reference = as_read(expected.at("gradients"), checkpoint.checkpoint_names.at(weight));
        worst = std::max(worst, worst_error(reference, g->tensor));
        ++checked;
      }
      CHECK(worst <= 1e-12);
      CHECK(checked == expected.at("gradients").size());
      if (std::getenv("ATTN_TEST_REPORT")) WARN(name << ": worst gradient error " << worst);
    }
  }
}

TEST_CASE("Marian and BART checkpoints: configuration and tensor names map onto attn's model",
          "[checkpoint][reference][seq2seq]") {
  const attn::CheckpointModel marian = attn::load_hf_model(kDir + "marian_f32");
  const attn::ModelConfig& m = marian.model.config;
  CHECK(marian.architecture == "MarianMTModel");
  CHECK(m.architecture == attn::Architecture::EncoderDecoder);
  CHECK(m.activation == attn::Activation::SiLU);  // "swish"
  CHECK(m.positional_encoding == attn::PositionalEncoding::SinusoidalTable);
  CHECK(m.scale_embeddings);
  CHECK(m.scores_times_inverse_root);
  CHECK_FALSE(m.norm_first);
  CHECK(marian.decoder_start_id == 15);
  CHECK(marian.never_generated == std::vector<std::size_t>{15});  // bad_words_ids [[pad]]
  CHECK(marian.eos_token_ids == std::vector<std::size_t>{0});
  CHECK(marian.model.output.tied);
  CHECK(marian.checkpoint_names.at("output.b") == "final_logits_bias[0:16]");
  CHECK(marian.checkpoint_names.at("encoder.1.attention.W_q") == "model.encoder.layers.1.self_attn.q_proj.weight.T");
  CHECK(marian.checkpoint_names.at("decoder.0.cross_attention.b_o") ==
        "model.decoder.layers.0.encoder_attn.out_proj.bias");
  CHECK(marian.checkpoint_names.at("decoder.1.norm3.gamma") == "model.decoder.layers.1.final_layer_norm.weight");
  // save_pretrained leaves the sinusoids out: built as _init_weight builds them, float32 values
  CHECK(marian.checkpoint_names.count("positions") == 0);
  REQUIRE(marian.model.positions.shape == attn::Shape{12, 8});
  CHECK(marian.model.positions.data[1 * 8 + 0] == static_cast<double>(static_cast<float>(std::sin(1.0))));
  CHECK(marian.model.positions.data[1 * 8 + 4] == static_cast<double>(static_cast<float>(std::cos(1.0))));
  const attn::CheckpointModel stored = attn::load_hf_model(kDir + "marian_f32_table_d6");
  CHECK(stored.checkpoint_names.at("positions") == "model.encoder.embed_positions.weight");
  CHECK(stored.model.config.d_head == 6);
  CHECK(stored.model.encoder.size() == 1);
  CHECK(stored.model.decoder.size() == 3);
  const attn::CheckpointModel wider = attn::load_hf_model(kDir + "marian_f16_wider_decoder");
  CHECK(wider.model.encoder[0].ffn.W_1.shape == attn::Shape{8, 12});
  CHECK(wider.model.decoder[0].ffn.W_1.shape == attn::Shape{8, 20});
  CHECK(wider.model.output.b.data.empty());  // no final_logits_bias: transformers' zeros
  // decoder_attention_heads 4 beside the encoder's 2: the decoder's blocks run 4 heads of 2
  const attn::CheckpointModel heads = attn::load_hf_model(kDir + "marian_f32_decoder_heads");
  CHECK(heads.model.config.num_heads == 2);
  CHECK(heads.model.config.d_head == 4);
  CHECK(heads.model.config.decoder_config().num_heads == 4);
  CHECK(heads.model.config.decoder_config().d_head == 2);
  const attn::CheckpointModel bart = attn::load_hf_model(kDir + "bart_f32");
  CHECK(bart.model.config.positional_encoding == attn::PositionalEncoding::Learned);
  CHECK(bart.model.config.activation == attn::Activation::GELU);
  CHECK(bart.checkpoint_names.at("positions") == "model.encoder.embed_positions.weight[2:14]");
  CHECK(bart.checkpoint_names.at("decoder_positions") == "model.decoder.embed_positions.weight[2:14]");
  CHECK(bart.checkpoint_names.at("encoder_embedding_norm.gamma") == "model.encoder.layernorm_embedding.weight");
  CHECK(bart.checkpoint_names.at("decoder_embedding_norm.beta") == "model.decoder.layernorm_embedding.bias");
  CHECK(bart.decoder_start_id == 2);
  // Every weight of the model has its source, under the name attn gives the parameter.
  for (const auto* c : {&marian, &bart}) {
    const auto list = attn::parameters(c->model);
    CHECK(list.size() == c->checkpoint_names.size());
    for (const auto& p : list) CHECK(c->checkpoint_names.count(attn::parameter_name(p.id)) == 1);
  }
}

TEST_CASE("Marian checkpoints: the scores are multiplied by head_dim^-0.5, as transformers does",
          "[checkpoint][reference][seq2seq]") {
  // d = 6: √6 is not a power of two, so scores · 6^-0.5 and scores / √6 are one rounding
  // apart in some elements; every scaled score is the product, bit for bit.
  const attn::Json expected = attn::read_json_object_file(kDir + "marian_f32_table_d6/expected.json");
  const attn::LoadedModel loaded =
      model_reading("marian_f32_table_d6", ids_of(expected.at("source")), ids_of(expected.at("decoder_input")));
  REQUIRE(loaded.model.config.d_head == 6);
  attn::Trace trace(true);
  attn::run_model(loaded.model, loaded.input, trace);
  const double scaling = std::pow(6.0, -0.5);
  std::size_t checked = 0, apart = 0;
  for (const char* block : {"encoder.0.attention", "decoder.2.self_attention", "decoder.1.cross_attention"}) {
    INFO(block);
    const attn::TraceEntry* scores = find_entry(trace, std::string(block) + ".scores");
    const attn::TraceEntry* scaled = find_entry(trace, std::string(block) + ".scaled_scores");
    REQUIRE((scores && scaled));
    for (std::size_t i = 0; i < scores->tensor.size(); ++i) {
      CHECK(scaled->tensor.data[i] == scores->tensor.data[i] * scaling);
      apart += scaled->tensor.data[i] != scores->tensor.data[i] / std::sqrt(6.0) ? 1 : 0;
      ++checked;
    }
  }
  CHECK(checked > 100);
  CHECK(apart > 0);  // (the division would have given another number somewhere)
}
