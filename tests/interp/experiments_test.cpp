// The experiments (attn/experiments.h) against NumPy float64 references of the same
// definitions (tests/reference/make_patch_cases.py -> patch_cases.json): every patched
// site's metric, the attribution's components and the answer after every layer, on attn's
// induction model (post-norm, RoPE) and on tiny GPT-2 and Llama checkpoints (pre-norm,
// biases, grouped-query attention, SwiGLU), to 1e-10 of the metric's scale.
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "arch/checkpoint.h"
#include "attn/error.h"
#include "attn/experiments.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "model/examples.h"
#include "model/json_reader.h"
#include "tokenizers/word_tokenizer.h"

namespace {

const std::string kReference = std::string(ATTN_SOURCE_DIR) + "/tests/reference/";

const attn::Json& cases() {
  static const attn::Json json =
      attn::parse_json(attn::read_text_file(kReference + "patch_cases.json"), "patch_cases.json");
  return json;
}

// A model and the inputs of a case: the induction example's text, or a checkpoint's ids as
// placeholder tokens w0 ... w{V-1} (the tokenizer's job, as tests/checkpoint/hf_model_test.cpp).
struct CaseModel {
  attn::LoadedModel loaded;
  attn::RunInput clean, corrupt;
};

attn::RunInput token_input(const attn::Model& model, const std::vector<std::size_t>& ids) {
  attn::RunInput input;
  input.batched = false;
  input.source_tokens.tokens.emplace_back();
  for (const std::size_t id : ids) input.source_tokens.tokens[0].push_back(model.vocab.token(id));
  return input;
}

std::unique_ptr<CaseModel> case_model(const std::string& name) {
  auto c = std::make_unique<CaseModel>();
  if (name == "induction") {
    const attn::BundledExample& example = attn::find_example("trained_induction");
    c->loaded = attn::load_model_text(example.json, "example trained_induction", attn::LoadOptions{});
  } else {
    attn::CheckpointModel checkpoint = attn::load_hf_model(kReference + "hf_checkpoints/" + name);
    c->loaded.model = std::move(checkpoint.model);
    std::vector<std::string> tokens;
    for (std::size_t i = 0; i < checkpoint.vocab_size; ++i) tokens.push_back("w" + std::to_string(i));
    c->loaded.model.vocab = attn::Vocabulary(tokens);
    c->loaded.model.tokenizer = std::make_shared<const attn::WordTokenizer>(c->loaded.model.vocab);
  }
  const attn::Json& expected = cases().at(name);
  c->clean = token_input(c->loaded.model, expected.at("clean_ids").get<std::vector<std::size_t>>());
  c->corrupt = token_input(c->loaded.model, expected.at("corrupt_ids").get<std::vector<std::size_t>>());
  return c;
}

attn::Metric metric_of(const attn::Json& expected) {
  attn::Metric metric;
  metric.answer = expected.at("answer").get<std::size_t>();
  if (!expected.at("wrong").is_null()) metric.wrong = expected.at("wrong").get<std::size_t>();
  return metric;
}

std::string key(const attn::Site& s) {
  return std::string(attn::site_kind_name(s.kind)) + " " + std::to_string(s.layer) + " " + std::to_string(s.index);
}

// Every site's value against the reference's, to 1e-10 of |m_clean - m_corrupt|.
void check_sweep(const CaseModel& c, const attn::Json& expected, bool resume) {
  attn::PatchExperiment::Options options;
  options.resume = resume;
  const attn::PatchExperiment experiment(c.loaded.model, c.clean, c.corrupt, metric_of(expected), options);
  const double clean = expected.at("clean").get<double>(), corrupt = expected.at("corrupt").get<double>();
  const double tolerance = 1e-10 * std::max(1.0, std::fabs(clean - corrupt));
  CHECK(std::fabs(experiment.clean() - clean) <= tolerance);
  CHECK(std::fabs(experiment.corrupt() - corrupt) <= tolerance);
  std::map<std::string, double> reference;
  for (const attn::Json& s : expected.at("sites"))
    reference[s.at("kind").get<std::string>() + " " + std::to_string(s.at("layer").get<int>()) + " " +
              std::to_string(s.at("index").get<std::size_t>())] = s.at("value").get<double>();
  const std::vector<attn::Site> sites = experiment.sites(attn::site_kinds());
  REQUIRE(sites.size() == reference.size());
  const std::vector<double> values = experiment.each(sites);
  double worst = 0;
  for (std::size_t i = 0; i < sites.size(); ++i) {
    INFO(key(sites[i]));
    REQUIRE(reference.count(key(sites[i])) == 1);
    worst = std::max(worst, std::fabs(values[i] - reference.at(key(sites[i]))));
  }
  INFO("largest difference " << worst);
  CHECK(worst <= tolerance);
}

}  // namespace

TEST_CASE("each patched site's metric equals NumPy's on the induction model and the checkpoints", "[interp][patch]") {
  for (const std::string name : {"induction", "gpt2_f32", "gpt2_f32_untied", "llama_f32"}) {
    INFO(name);
    const std::unique_ptr<CaseModel> c = case_model(name);
    check_sweep(*c, cases().at(name), true);
  }
  INFO("the metric logit(answer) alone");
  const std::unique_ptr<CaseModel> c = case_model("induction");
  check_sweep(*c, cases().at("induction").at("logit_only"), true);
}

TEST_CASE("a patched run from the embeddings gives what a run resumed at its layer gives", "[interp][patch]") {
  for (const std::string name : {"induction", "llama_f32"}) {
    INFO(name);
    const std::unique_ptr<CaseModel> c = case_model(name);
    check_sweep(*c, cases().at(name), false);
  }
}

TEST_CASE("patching every position of a layer's resid_pre gives the clean run's metric", "[interp][patch]") {
  for (const std::string name : {"induction", "gpt2_f32", "llama_f32"}) {
    INFO(name);
    const std::unique_ptr<CaseModel> c = case_model(name);
    const attn::Json& expected = cases().at(name);
    const attn::PatchExperiment experiment(c->loaded.model, c->clean, c->corrupt, metric_of(expected), {});
    const std::vector<attn::Site> layer1 = [&] {
      std::vector<attn::Site> out;
      for (const attn::Site& s : experiment.sites({attn::SiteKind::ResidPre}))
        if (s.layer == 1) out.push_back(s);
      return out;
    }();
    // the same computation as the clean run's from layer 1 on: the same bits
    CHECK(experiment.together(layer1) == experiment.clean());
    CHECK(std::fabs(expected.at("resid_pre_1_every_position").get<double>() - experiment.clean()) <= 1e-10);
    CHECK(experiment.together({}) == experiment.corrupt());
  }
}

TEST_CASE("direct logit attribution's components equal NumPy's and sum to the metric", "[interp][attribute]") {
  for (const std::string name : {"gpt2_f32", "gpt2_f32_untied", "llama_f32"}) {
    INFO(name);
    const std::unique_ptr<CaseModel> c = case_model(name);
    const attn::Json& expected = cases().at(name).at("attribution");
    const attn::Attribution a = attn::attribute(c->loaded.model, c->clean, metric_of(expected));
    const double total = expected.at("total").get<double>();
    CHECK(std::fabs(a.total - total) <= 1e-10 * std::max(1.0, std::fabs(total)));
    CHECK(std::fabs(a.scale - expected.at("scale").get<double>()) <= 1e-12 * a.scale);
    const attn::Json& components = expected.at("components");
    REQUIRE(a.components.size() == components.size());
    double sum = 0;
    for (std::size_t i = 0; i < a.components.size(); ++i) {
      CHECK(a.components[i].name == components[i].at("name").get<std::string>());
      CHECK(std::fabs(a.components[i].value - components[i].at("value").get<double>()) <= 1e-10);
      sum += a.components[i].value;
    }
    CHECK(std::fabs(sum - a.total) <= 1e-12 * std::max(1.0, std::fabs(a.total)));
  }
}

// The identity the method rests on, on every pre-norm family attn reads: the components add
// up to the model's own metric. Gemma's final RMSNorm scales by 1 + gamma, Phi's head has a
// bias, GPT-NeoX's head is untied: each must be in the components for the sum to hold.
TEST_CASE("attribution's components sum to the metric on every decoder family", "[interp][attribute]") {
  for (const std::string name :
       {"gpt_neo_f32", "gpt_neox_f32", "gemma_f32", "gemma_bf16_mha", "phi_f32", "phi_f16_gqa", "mistral_window_f32"}) {
    INFO(name);
    attn::CheckpointModel checkpoint = attn::load_hf_model(kReference + "hf_checkpoints/" + name);
    attn::Model& model = checkpoint.model;
    std::vector<std::string> tokens;
    for (std::size_t i = 0; i < checkpoint.vocab_size; ++i) tokens.push_back("w" + std::to_string(i));
    model.vocab = attn::Vocabulary(tokens);
    model.tokenizer = std::make_shared<const attn::WordTokenizer>(model.vocab);
    attn::Metric metric;
    metric.answer = 3;
    metric.wrong = 5;
    const attn::Attribution a = attn::attribute(model, token_input(model, {1, 4, 2, 7, 7, 0, 11}), metric);
    double sum = 0;
    for (const auto& component : a.components) sum += component.value;
    CHECK(std::fabs(sum - a.total) <= 1e-12 * std::max(1.0, std::fabs(a.total)));
  }
}

TEST_CASE("attribution refuses a post-norm model, saying why", "[interp][attribute]") {
  const std::unique_ptr<CaseModel> c = case_model("induction");
  try {
    attn::attribute(c->loaded.model, c->clean, metric_of(cases().at("induction")));
    FAIL("no error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()).find("post-norm") != std::string::npos);
  }
}

TEST_CASE("the answer after every layer equals NumPy's lens", "[interp][lens]") {
  std::unique_ptr<CaseModel> c = case_model("induction");
  attn::RunInput input = c->clean;
  input.lens = true;
  attn::Trace trace(true);
  attn::run_model(c->loaded.model, input, trace);
  const std::size_t f = c->loaded.model.vocab.find("f").value();
  const std::vector<attn::LayerAnswer> answers = attn::answer_by_layer(trace, f);
  const attn::Json& expected = cases().at("induction").at("lens_f");
  REQUIRE(answers.size() == expected.size());
  for (std::size_t l = 0; l < answers.size(); ++l) {
    CHECK(answers[l].layer == static_cast<int>(l));
    CHECK(answers[l].rank == expected[l].at("rank").get<std::size_t>());
    CHECK(std::fabs(answers[l].logit - expected[l].at("logit").get<double>()) <= 1e-10);
    CHECK(std::fabs(answers[l].probability - expected[l].at("probability").get<double>()) <= 1e-12);
  }
}

TEST_CASE("bad experiments are refused in one line before any run", "[interp][errors]") {
  std::unique_ptr<CaseModel> c = case_model("induction");
  const attn::Model& model = c->loaded.model;
  const attn::Metric metric = metric_of(cases().at("induction"));
  attn::RunInput shorter = token_input(model, {2, 4, 5});
  CHECK_THROWS_WITH(attn::PatchExperiment(model, c->clean, shorter, metric, {}),
                    "--corrupt: expected as many tokens as the clean text's 12, found 3: the runs are compared "
                    "position by position");
  CHECK_THROWS_WITH(attn::single_token(model, "f g", "--answer"),
                    "--answer: expected one token of the model's vocabulary, found \"f g\", 2 tokens: f g");
  attn::PatchExperiment::Options tiny;
  tiny.max_memory_bytes = 1000;
  CHECK_THROWS_WITH(attn::PatchExperiment(model, c->clean, c->corrupt, metric, tiny),
                    Catch::Contains("more than the limit of 1.0 KiB"));
  const attn::PatchExperiment experiment(model, c->clean, c->corrupt, metric, {});
  CHECK_THROWS_WITH(experiment.check_site({attn::SiteKind::Head, attn::Stack::Decoder, 1, 2}, "--site"),
                    "--site: expected a head 0..1, found 2");
  CHECK_THROWS_WITH(experiment.check_site({attn::SiteKind::ResidPre, attn::Stack::Decoder, 2, 0}, "--site"),
                    "--site: expected a layer 0..1, found 2");
}

TEST_CASE("an encoder-decoder's sites are the encoder's and the decoder's, resumed or not alike", "[interp][patch]") {
  attn::LoadedModel loaded =
      attn::load_model_text(attn::find_example("trained_copy").json, "example trained_copy", attn::LoadOptions{});
  const attn::Model& model = loaded.model;
  attn::RunInput clean = loaded.input, corrupt = loaded.input;
  attn::replace_source_text(model, clean, "3 1 4 1 5", "clean");
  attn::replace_target_text(model, clean, "<BOS> 3 1 4 1", "target");
  attn::replace_source_text(model, corrupt, "3 1 9 1 5", "corrupt");
  corrupt.target_tokens = clean.target_tokens;
  attn::Metric metric;
  metric.answer = model.vocab.find("5").value();
  metric.wrong = model.vocab.find("9").value();
  attn::PatchExperiment::Options from_embeddings;
  from_embeddings.resume = false;
  const attn::PatchExperiment resumed(model, clean, corrupt, metric, {});
  const attn::PatchExperiment plain(model, clean, corrupt, metric, from_embeddings);
  REQUIRE(resumed.stacks().size() == 2);
  CHECK(resumed.stacks()[0].stack == attn::Stack::Encoder);
  CHECK(resumed.stacks()[0].positions == 5);
  CHECK(resumed.stacks()[1].positions == 5);  // <BOS> 3 1 4 1
  const std::vector<attn::Site> sites = resumed.sites(attn::site_kinds());
  const std::vector<double> a = resumed.each(sites), b = plain.each(sites);
  for (std::size_t i = 0; i < sites.size(); ++i) CHECK(std::fabs(a[i] - b[i]) <= 1e-12);
  // the source's one difference, patched at the encoder's input, restores everything
  CHECK(resumed.together({{attn::SiteKind::ResidPre, attn::Stack::Encoder, 0, 2}}) == resumed.clean());
  CHECK(resumed.clean() != resumed.corrupt());
}

TEST_CASE("patch's metric on BERT is the logit its whole head gives: transform, norm, bias", "[interp][patch]") {
  // BERT's head: act(h W_t + b_t), its LayerNorm, then Eᵀ and the head's own bias. The
  // metric is the logit of the answer at the last position, as explain --dump's
  // output.logits holds it.
  attn::CheckpointModel checkpoint = attn::load_hf_model(kReference + "hf_checkpoints/bert_mlm_f32");
  attn::Model model = std::move(checkpoint.model);
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < checkpoint.vocab_size; ++i) tokens.push_back("w" + std::to_string(i));
  model.vocab = attn::Vocabulary(tokens);
  model.tokenizer = std::make_shared<const attn::WordTokenizer>(model.vocab);
  REQUIRE(model.output.has_transform());
  REQUIRE(model.output.tied);
  REQUIRE(model.output.b.has_values());
  const attn::RunInput clean = token_input(model, {1, 5, 2, 7}), corrupt = token_input(model, {1, 6, 2, 7});
  const std::size_t answer = 3, wrong = 9;
  const auto last_logits = [&](const attn::RunInput& input) {
    std::vector<double> row;
    attn::Trace trace(true);
    trace.keep_entries(false);
    trace.set_sink([&](const attn::TraceRecord& r) {
      if (r.name != "output.logits") return;
      const std::size_t T = r.shape.at(0), V = r.shape.at(1);  // (T,V): one text
      row.assign(r.data + (T - 1) * V, r.data + T * V);
    });
    attn::run_model(model, input, trace);
    REQUIRE(!row.empty());
    return row;
  };
  const std::vector<double> clean_row = last_logits(clean), corrupt_row = last_logits(corrupt);
  attn::Metric logit;
  logit.answer = answer;
  const attn::PatchExperiment alone(model, clean, corrupt, logit, attn::PatchExperiment::Options{});
  CHECK(std::fabs(alone.clean() - clean_row[answer]) <= 1e-12);
  CHECK(std::fabs(alone.corrupt() - corrupt_row[answer]) <= 1e-12);
  attn::Metric difference = logit;
  difference.wrong = wrong;
  const attn::PatchExperiment both(model, clean, corrupt, difference, attn::PatchExperiment::Options{});
  CHECK(std::fabs(both.clean() - (clean_row[answer] - clean_row[wrong])) <= 1e-12);
  CHECK(std::fabs(both.corrupt() - (corrupt_row[answer] - corrupt_row[wrong])) <= 1e-12);
  // --site's worked logit: the row the head reads (after its transform and norm) · the
  // answer's column + its bias
  const attn::SiteDetail d = both.detail(attn::Site{attn::SiteKind::ResidPre, attn::Stack::Encoder, 0, 1});
  double dot = d.answer_bias;
  for (std::size_t n = 0; n < d.hidden.size(); ++n) dot += d.hidden.data[n] * d.answer_column.data[n];
  CHECK(std::fabs(dot - d.answer_logit) <= 1e-12);
}
