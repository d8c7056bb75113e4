// BERT checkpoints (BertForMaskedLM, BertForPreTraining, BertModel) read into attn's Model
// and run by the BERT family's forward program: the logits (or a BertModel's last hidden
// states) and every attention weight agree with a float64 evaluation of modeling_bert.py to
// 1e-12, a padded batch's too, and `attn grad`'s loss and every weight's gradient agree
// with torch.autograd on the same weights, to 1e-12 of each tensor's largest value (or 1)
// (tests/reference/make_hf_checkpoints.py and
// hf_bert.py wrote the checkpoints and the references).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>

#include <catch2/catch.hpp>

#include "arch/checkpoint.h"
#include "attn/backward.h"
#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/model_writer.h"
#include "attn/parameters.h"
#include "attn/trace.h"
#include "checkpoint/json_file.h"
#include "reference_cases.h"
#include "tokenizers/word_tokenizer.h"
#include "trace_lookup.h"

namespace {

const std::string kDir = std::string(ATTN_SOURCE_DIR) + "/tests/reference/hf_checkpoints/";

// The checkpoint's model with placeholder tokens ("<PAD>" for id 0, BERT's [PAD], so that a
// batch is padded with it; w1 ... w{V-1}) and these sentences of ids as its input.
attn::LoadedModel bert_reading(const std::string& name, const std::vector<std::vector<std::size_t>>& sentences,
                               const attn::LoadOptions& options = {}) {
  attn::CheckpointModel checkpoint = attn::load_hf_model(kDir + name, options);
  attn::LoadedModel loaded;
  loaded.model = std::move(checkpoint.model);
  std::vector<std::string> tokens = {"<PAD>"};
  for (std::size_t i = 1; i < checkpoint.vocab_size; ++i) tokens.push_back("w" + std::to_string(i));
  loaded.model.vocab = attn::Vocabulary(tokens);
  loaded.model.tokenizer = std::make_shared<const attn::WordTokenizer>(loaded.model.vocab);
  loaded.input.batched = sentences.size() > 1;
  for (const auto& ids : sentences) {
    loaded.input.source_tokens.tokens.emplace_back();
    for (const std::size_t id : ids)
      if (id != 0) loaded.input.source_tokens.tokens.back().push_back(tokens.at(id));  // attn pads the batch itself
  }
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

// The largest |attn - reference| over the nested array and the tensor.
double worst_error(const attn::Json& expected, const attn::Tensor& actual) {
  const std::vector<double> reference = flat(expected);
  REQUIRE(reference.size() == actual.size());
  double worst = 0;
  for (std::size_t i = 0; i < reference.size(); ++i) worst = std::max(worst, std::fabs(reference[i] - actual.data[i]));
  return worst;
}

const attn::TraceEntry& entry(const attn::Trace& trace, const std::string& name) {
  const attn::TraceEntry* e = find_entry(trace, name);
  INFO(name);
  REQUIRE(e != nullptr);
  return *e;
}

// Every layer's attention weights (H,S,S) (a batch's (B,H,S,S)) against the reference's.
double attention_error(const attn::Trace& trace, const attn::Json& layers, std::size_t count) {
  REQUIRE(layers.size() == count);
  double worst = 0;
  for (std::size_t l = 0; l < count; ++l)
    worst = std::max(
        worst, worst_error(layers[l], entry(trace, "encoder." + std::to_string(l) + ".attention.weights").tensor));
  return worst;
}

std::vector<std::string> bert_cases() {
  std::vector<std::string> names;
  std::ifstream in(kDir + "bert_cases.txt");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) names.push_back(line);
  return names;
}

}  // namespace

TEST_CASE("BERT checkpoints: logits and attention weights agree with modeling_bert.py in float64",
          "[checkpoint][reference][bert]") {
  const auto names = bert_cases();
  REQUIRE(names.size() == 4);
  for (const auto& name : names) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected = attn::read_json_object_file(kDir + name + "/expected.json");
      const attn::LoadedModel loaded = bert_reading(name, {expected.at("ids").get<std::vector<std::size_t>>()});
      const attn::Model& model = loaded.model;
      attn::Trace trace(true);
      attn::run_model(model, loaded.input, trace);
      const bool head = expected.contains("logits");
      CHECK(model.output.present == head);
      // a BertModel's output is its last layer's
      const double output_error =
          head ? worst_error(expected.at("logits"), entry(trace, "output.logits").tensor)
               : worst_error(expected.at("hidden"),
                             entry(trace, "encoder." + std::to_string(model.encoder.size() - 1) + ".output").tensor);
      CHECK(output_error <= 1e-12);
      const double weights_error = attention_error(trace, expected.at("attention_weights"), model.encoder.size());
      CHECK(weights_error <= 1e-12);
      // bidirectional: no mask entry, and every weight of a row above 0
      CHECK(find_entry(trace, "encoder.mask") == nullptr);
      if (std::getenv("ATTN_TEST_REPORT"))
        WARN(name << ": worst output error " << output_error << ", worst attention weight error " << weights_error);
    }
  }
}

TEST_CASE("BERT: a padded batch hides the [PAD] keys as the attention mask does", "[checkpoint][reference][bert]") {
  const attn::Json expected = attn::read_json_object_file(kDir + "bert_mlm_f32/expected.json");
  const attn::Json& batch = expected.at("batch");
  const attn::LoadedModel loaded =
      bert_reading("bert_mlm_f32", batch.at("ids").get<std::vector<std::vector<std::size_t>>>());
  attn::Trace trace(false);
  attn::run_model(loaded.model, loaded.input, trace);
  REQUIRE(find_entry(trace, "tokens.padding_mask") != nullptr);
  CHECK(worst_error(batch.at("logits"), entry(trace, "output.logits").tensor) <= 1e-12);
  CHECK(attention_error(trace, batch.at("attention_weights"), loaded.model.encoder.size()) <= 1e-12);
}

TEST_CASE("BERT: attn grad's loss and weight gradients agree with torch.autograd", "[checkpoint][reference][bert]") {
  for (const std::string name : {"bert_mlm_f32", "bert_pretraining_legacy_f16", "bert_mlm_untied_bf16"}) {
    DYNAMIC_SECTION(name) {
      const attn::Json expected = attn::read_json_object_file(kDir + name + "/expected.json");
      attn::LoadOptions options;
      options.backward = true;
      attn::LoadedModel loaded = bert_reading(name, {expected.at("ids").get<std::vector<std::size_t>>()}, options);
      const auto labels = expected.at("labels").get<std::vector<std::size_t>>();
      loaded.input.labels = attn::Tensor({1, labels.size()}, {"B", "T"});
      for (std::size_t i = 0; i < labels.size(); ++i) loaded.input.labels.data[i] = static_cast<double>(labels[i]);
      attn::Trace trace(true);
      attn::run_model(loaded.model, loaded.input, trace);
      attn::run_backward(loaded.model, loaded.input, trace);
      std::size_t compared = 0;
      double worst_relative = 0;
      for (const auto& g : expected.at("gradients")) {
        const std::string gname = g.at("name").get<std::string>();
        INFO(gname);
        const std::vector<double> reference = g.at("data").get<std::vector<double>>();
        const attn::TraceEntry& e = entry(trace, gname);
        REQUIRE(e.tensor.size() == reference.size());
        double largest = 0, worst = 0;
        for (std::size_t i = 0; i < reference.size(); ++i) {
          largest = std::max(largest, std::fabs(reference[i]));
          worst = std::max(worst, std::fabs(reference[i] - e.tensor.data[i]));
        }
        CHECK(worst <= 1e-12 * std::max(1.0, largest));
        worst_relative = std::max(worst_relative, worst / std::max(1.0, largest));
        ++compared;
      }
      if (std::getenv("ATTN_TEST_REPORT")) WARN(name << ": worst gradient error " << worst_relative);
      // the loss, the logits' gradient and every weight of the model
      CHECK(compared == 2 + attn::parameters(loaded.model).size());
    }
  }
}

TEST_CASE("BERT: each weight names its checkpoint tensor, legacy gamma/beta included", "[checkpoint][bert]") {
  const attn::CheckpointModel legacy = attn::load_hf_model(kDir + "bert_pretraining_legacy_f16");
  CHECK(legacy.architecture == "BertForPreTraining");
  CHECK(legacy.checkpoint_names.at("embedding_norm.gamma") == "bert.embeddings.LayerNorm.gamma");
  CHECK(legacy.checkpoint_names.at("encoder.1.norm2.beta") == "bert.encoder.layer.1.output.LayerNorm.beta");
  CHECK(legacy.checkpoint_names.at("encoder.0.attention.W_k") == "bert.encoder.layer.0.attention.self.key.weight.T");
  CHECK(legacy.checkpoint_names.at("output.transform.W") == "cls.predictions.transform.dense.weight.T");
  CHECK(legacy.checkpoint_names.at("output.b") == "cls.predictions.bias");
  CHECK(legacy.model.output.tied);
  CHECK(legacy.model.output.fills_in);
  const attn::CheckpointModel encoder = attn::load_hf_model(kDir + "bert_model_f64");
  CHECK(encoder.checkpoint_names.at("token_types") == "embeddings.token_type_embeddings.weight");
  CHECK(!encoder.model.output.present);
  for (const auto* m : {&legacy, &encoder})
    for (const auto& p : attn::parameters(m->model)) CHECK(m->checkpoint_names.count(attn::parameter_name(p.id)) == 1);
}

TEST_CASE("BERT: --ablate zeroes a head as BertModel's head_mask does and --lens reads every layer through the head",
          "[checkpoint][reference][bert]") {
  const attn::Json expected = attn::read_json_object_file(kDir + "bert_mlm_f32/expected.json");
  attn::LoadedModel loaded = bert_reading("bert_mlm_f32", {expected.at("ids").get<std::vector<std::size_t>>()});
  loaded.input.ablation.heads.push_back({attn::Stack::Encoder, 1, 0});  // --ablate 1.0
  loaded.input.lens = true;
  attn::Trace trace(true);
  attn::run_model(loaded.model, loaded.input, trace);
  CHECK(find_entry(trace, "encoder.1.attention.context_ablated") != nullptr);
  CHECK(worst_error(expected.at("ablated_1_0_logits"), entry(trace, "output.logits").tensor) <= 1e-12);
  // the lens: each layer through the head's transform, its norm and the tied logits; the last
  // layer's is the model's own output, bit for bit
  for (const char* name : {"lens.0.transform", "lens.0.transform_norm", "lens.0.logits", "lens.1.probabilities"})
    CHECK(find_entry(trace, name) != nullptr);
  CHECK(entry(trace, "lens.1.logits").tensor.data == entry(trace, "output.logits").tensor.data);
  CHECK(entry(trace, "lens.0.logits").tensor.data != entry(trace, "output.logits").tensor.data);
}

TEST_CASE("BERT: a model file cannot hold its weights, so none is written without them", "[checkpoint][bert]") {
  const attn::LoadedModel loaded = bert_reading("bert_mlm_f32", {{2, 5, 3}});
  try {
    (void)attn::model_file_json(loaded.model, loaded.input, "trained");
    FAIL("a BERT model was written as a model file");
  } catch (const attn::InputError& e) {
    CHECK(e.json_path() == "token_types");
  }
}

TEST_CASE("BERT: a pytorch_model.bin gives the safetensors file's logits, its tied tensors read once",
          "[checkpoint][reference][bert][pytorch_bin]") {
  std::ifstream list(kDir + "bert_bin_cases.txt");
  std::size_t run = 0;
  for (std::string bin, source; list >> bin >> source;) {
    DYNAMIC_SECTION(bin) {
      const attn::Json expected = attn::read_json_object_file(kDir + source + "/expected.json");
      const auto ids = expected.at("ids").get<std::vector<std::size_t>>();
      const attn::LoadedModel from_bin = bert_reading(bin, {ids});
      const attn::LoadedModel from_safetensors = bert_reading(source, {ids});
      attn::Trace a(true), b(true);
      attn::run_model(from_bin.model, from_bin.input, a);
      attn::run_model(from_safetensors.model, from_safetensors.input, b);
      CHECK(entry(a, "output.logits").tensor.data == entry(b, "output.logits").tensor.data);
      CHECK(worst_error(expected.at("logits"), entry(a, "output.logits").tensor) <= 1e-12);
      CHECK(from_bin.model.output.tied);  // cls.predictions.decoder.weight, the embeddings' storage, not read
    }
    ++run;
  }
  CHECK(run == 2);
}
