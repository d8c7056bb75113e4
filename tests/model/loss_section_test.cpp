// input.labels and input.output_grad: read as the run will use them.
#include "model/loss_section.h"

#include <string>

#include <catch2/catch.hpp>

#include "attn/model_file.h"
#include "attn/parameters.h"

namespace {

std::string model_with_labels(const std::string& labels) {
  return R"({"model": {"d_model": 4, "num_heads": 2, "d_ff": 4},
             "vocab": ["<PAD>", "<UNK>", "<BOS>", "<EOS>", "a", "b"], "embedding": "randn",
             "input": {"text": ["a b", "b"], "target_text": ["<BOS> a b", "<BOS>"], "labels": )" +
         labels + R"(}, "encoder": "randn", "decoder": "randn", "output": "tied"})";
}

}  // namespace

TEST_CASE("labels as text, tokens or ids give the same ids, <PAD> after each sentence", "[loss_section]") {
  // <PAD> 0, <UNK> 1, <BOS> 2, <EOS> 3, a 4, b 5; the target has 3 and 1 tokens
  for (const char* labels :
       {R"(["a b <EOS>", "zebra"])", R"([["a", "b", "<EOS>"], ["zebra"]])", R"([[4, 5, 3], [1]])"}) {
    INFO(labels);
    const attn::LoadedModel model = attn::load_model_text(model_with_labels(labels), "model.json");
    CHECK(model.input.labels.shape == attn::Shape{2, 3});
    CHECK(model.input.labels.data == std::vector<double>{4, 5, 3, 1, 0, 0});
  }
  const attn::LoadedModel labeled = attn::load_model_text(model_with_labels(R"([[4, 5, 3], [1]])"), "m.json");
  CHECK(attn::final_output_shape(labeled.model, labeled.input) == attn::Shape{2, 3, 4});
}

TEST_CASE("output_grad is drawn after every weight: adding it changes no other number", "[loss_section]") {
  const std::string without = R"({"model": {"d_model": 4, "num_heads": 2, "seed": 7},
    "input": {"X": {"randn": [3, 4]}},
    "encoder": [{"attention": {"W_q": "randn", "W_k": "randn", "W_v": "randn"}}]})";
  std::string with = without;
  with.replace(with.find("{\"randn\": [3, 4]}}"), 18, "{\"randn\": [3, 4]}, \"output_grad\": \"randn\"}");
  const attn::LoadedModel a = attn::load_model_text(without, "a.json"), b = attn::load_model_text(with, "b.json");
  CHECK(a.input.X.data == b.input.X.data);
  CHECK(a.model.encoder[0].attention.W_v.data == b.model.encoder[0].attention.W_v.data);
  // (S, H*d) in the file, (1, S, H*d) in the run: no W_o, so H*d = 4 columns
  CHECK(b.input.output_grad.shape == attn::Shape{1, 3, 4});
  CHECK(attn::final_output_shape(b.model, b.input) == attn::Shape{3, 4});
}

TEST_CASE("a sentence on the command line drops the file's labels, and --labels gives them again", "[loss_section]") {
  attn::LoadedModel model = attn::load_model_text(model_with_labels(R"([[4, 5, 3], [1]])"), "model.json");
  attn::replace_source_text(model.model, model.input, "a", "text (command line)");
  CHECK(model.input.labels.data.empty());
  CHECK_THROWS_WITH(attn::check_loss_defined(model.model, model.input), Catch::Contains("input.labels: missing"));
  attn::replace_labels(model.model, model.input, "b",
                       "--labels (command line)");  // the decoder starts from <BOS>: one position
  CHECK(model.input.labels.data == std::vector<double>{5});
  attn::check_loss_defined(model.model, model.input);
  CHECK_THROWS_WITH(attn::replace_labels(model.model, model.input, "a b", "--labels (command line)"),
                    "model.json: --labels (command line): expected 1 label, one per position of the target (1 token), "
                    "found 2");
}
