// attn train's data: JSON Lines read as model-file inputs, batches padded with <PAD>, and the
// order of the batches (NumPy's permutation when shuffling).
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/model_file.h"
#include "attn/train.h"
#include "error_message.h"

namespace {

// <PAD> 0, <UNK> 1, <BOS> 2, <EOS> 3, a 4, b 5
const char* const kModel = R"({"model": {"d_model": 4, "num_heads": 2, "d_ff": 4},
  "vocab": ["<PAD>", "<UNK>", "<BOS>", "<EOS>", "a", "b"], "embedding": "randn",
  "input": {"text": "a b", "target_text": "<BOS> b a", "labels": "b a <EOS>"},
  "encoder": "randn", "decoder": "randn", "output": "tied"})";

}  // namespace

TEST_CASE("a batch is padded with <PAD>, its labels too", "[train][dataset]") {
  attn::LoadedModel model = attn::load_model_text(kModel, "m.json");
  const attn::Dataset data = attn::parse_dataset(
      "{\"text\": \"a b a\", \"target_text\": \"<BOS> a\", \"labels\": \"a <EOS>\"}\n"
      "\n"
      "{\"tokens\": [\"b\"], \"target_tokens\": [\"<BOS>\", \"b\", \"b\"], \"labels\": [5, 5, 3]}\n",
      "d.jsonl", model.model);
  REQUIRE(data.examples.size() == 2);
  CHECK(data.examples[1].line == 3);
  CHECK(data.max_source == 3);
  CHECK(data.max_target == 3);
  const attn::RunInput batch = attn::batch_input(model.model, data, {0, 1});
  CHECK(batch.labels.shape == attn::Shape{2, 3});
  CHECK(batch.labels.data == std::vector<double>{4, 3, 0, 5, 5, 3});
  CHECK(batch.source_tokens.tokens == std::vector<std::vector<std::string>>{{"a", "b", "a"}, {"b"}});
  CHECK(batch.target_tokens.tokens == std::vector<std::vector<std::string>>{{"<BOS>", "a"}, {"<BOS>", "b", "b"}});
}

TEST_CASE("a bad line is named by its number and JSON path", "[train][dataset]") {
  const attn::LoadedModel model = attn::load_model_text(kModel, "m.json");
  CHECK(attn_test::input_error_of([&] {
          attn::parse_dataset("{\"text\": \"a\", \"target_text\": \"<BOS>\", \"labels\": \"a\"}\n{\"text\": 3}\n",
                              "d.jsonl", model.model);
        }).rfind("d.jsonl:2", 0) == 0);
  const std::string no_labels = attn_test::input_error_of(
      [&] { attn::parse_dataset("{\"text\": \"a\", \"target_text\": \"<BOS>\"}", "d.jsonl", model.model); });
  CHECK(no_labels.rfind("d.jsonl:1", 0) == 0);
  CHECK(no_labels.find("expected labels") != std::string::npos);
  CHECK(attn_test::input_error_of([&] {
          attn::parse_dataset("\n\n", "d.jsonl", model.model);
        }).find("at least one example") != std::string::npos);
  CHECK(attn_test::input_error_of([&] {
          attn::parse_dataset("{\"text\": \"a\"", "d.jsonl", model.model);
        }).rfind("d.jsonl:1", 0) == 0);
}

TEST_CASE("examples are counted as they are read: refused at the line that passes the limit", "[train][dataset]") {
  const attn::Model model = attn::load_model_text(kModel, "m.json").model;
  // A line of X as zeros of (64, 4): 64 x 4 x 8 = 2048 bytes of numbers, plus the example's
  // own few hundred. Under a limit of 1 MiB (the smallest --max-memory) the examples pass
  // it after at most 1 MiB / 2048 = 512 lines, and 300 lines fit.
  const std::string line = "{\"X\": {\"zeros\": [64, 4]}, \"target_text\": \"<BOS>\", \"labels\": \"a\"}\n";
  std::string text;
  for (int i = 0; i < 600; ++i) text += line;
  attn::LoadOptions load;
  load.max_memory_bytes = 1 << 20;
  const std::string message = attn_test::input_error_of([&] { attn::parse_dataset(text, "d.jsonl", model, load); });
  const std::string tail =
      ": the examples up to this line would need about 1.0 MiB, more than the limit of 1.0 MiB; use fewer or "
      "shorter examples or raise --max-memory";
  // Or the line's own JSON is refused first, when its document would not fit in what the
  // examples before it left (which of the two comes first follows sizeof(Tensor)).
  const std::string json_head = ": reading this file would need about ";
  const std::string json_tail = "; is this the right file?";
  INFO(message);
  REQUIRE(message.rfind("d.jsonl:", 0) == 0);
  REQUIRE(message.size() > json_head.size() + json_tail.size());
  const std::string after_line = message.substr(message.find(':', 8));
  const bool examples_refused = message.size() > tail.size() && message.substr(message.size() - tail.size()) == tail;
  const bool line_refused = after_line.rfind(json_head, 0) == 0 &&
                            after_line.substr(after_line.size() - json_tail.size()) == json_tail &&
                            after_line.find("JSON values), more than the limit of 0.") != std::string::npos;
  CHECK((examples_refused || line_refused));
  const int refused_at = std::stoi(message.substr(8));
  CHECK(refused_at > 300);
  CHECK(refused_at <= 512);
  CHECK(attn::parse_dataset(text.substr(0, 300 * line.size()), "d.jsonl", model, load).examples.size() == 300);
}

TEST_CASE("a line is read only up to what the limit has left, and 16 MiB at most", "[train][dataset]") {
  const attn::Model model = attn::load_model_text(kModel, "m.json").model;
  attn::LoadOptions load;
  load.max_memory_bytes = 1 << 20;
  // A first line of 2 MiB under a limit of 1 MiB: refused as a line, before its JSON is parsed.
  const std::string good = "{\"text\": \"a\", \"target_text\": \"<BOS>\", \"labels\": \"a\"}\n";
  const std::string huge = "{\"text\": \"" + std::string(2 << 20, 'a') + "\"}\n";
  CHECK(attn_test::input_error_of([&] { attn::parse_dataset(huge + good, "d.jsonl", model, load); }) ==
        "d.jsonl:1: expected a line of at most 1.0 MiB (what the examples before it left of the limit of 1.0 MiB; "
        "raise --max-memory), found a longer line; is this the right file?");
  // Under the default limit, a line is an example: 16 MiB at most.
  const std::string endless = good + std::string(17 << 20, ' ');
  CHECK(attn_test::input_error_of([&] { attn::parse_dataset(endless, "d.jsonl", model); }) ==
        "d.jsonl:2: expected a line of at most 16.0 MiB (one example; write large tensors as {\"zeros\": [S, d]}), "
        "found a longer line; is this the right file?");
  // A line that fits but whose parsed document would not: 200,000 empty arrays are 600 KB of
  // text and about 16 MB of JSON values.
  std::string arrays = "{\"text\": [";
  for (int i = 0; i < 200000; ++i) arrays += "[],";
  arrays += "[]]}\n";
  const std::string message =
      attn_test::input_error_of([&] { attn::parse_dataset(good + arrays, "d.jsonl", model, load); });
  CHECK(message.rfind("d.jsonl:2: reading this file would need about ", 0) == 0);
  CHECK(message.find("(200002 JSON values)") != std::string::npos);
  // A NUL byte in a line.
  CHECK(attn_test::input_error_of([&] {
          attn::parse_dataset(good + std::string("{\"text\": \"a\0\"}\n", 15), "d.jsonl", model);
        }) == "d.jsonl:2: column 12: expected text, found a NUL byte; is this the right file?");
}

TEST_CASE("a data set gives every example the same way: tokens or numbers, not both", "[train][dataset]") {
  const attn::Model model = attn::load_model_text(kModel, "m.json").model;
  CHECK(attn_test::input_error_of([&] {
          attn::parse_dataset(
              "{\"text\": \"a b\", \"target_text\": \"<BOS>\", \"labels\": \"a\"}\n"
              "{\"X\": [[1, 2, 3, 4]], \"target_text\": \"<BOS>\", \"labels\": \"a\"}\n",
              "d.jsonl", model);
        }) ==
        "d.jsonl:2: expected text or tokens like line 1, found X: one training set gives every example the same way");
}

TEST_CASE("batches: file order cycling, or NumPy's permutation per epoch", "[train][dataset]") {
  attn::BatchOrder plain(10, 4, false, 0);
  CHECK(plain.batches_per_epoch() == 3);
  CHECK(plain.next() == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(plain.next() == std::vector<std::size_t>{4, 5, 6, 7});
  CHECK(plain.next() == std::vector<std::size_t>{8, 9});
  CHECK(plain.next() == std::vector<std::size_t>{0, 1, 2, 3});
  // np.random.seed(0); np.random.permutation(10) twice (NumPy 1.24):
  //   [2, 8, 4, 9, 1, 6, 7, 3, 0, 5], then [3, 5, 1, 2, 9, 8, 0, 6, 7, 4]
  attn::BatchOrder shuffled(10, 4, true, 0);
  CHECK(shuffled.next() == std::vector<std::size_t>{2, 8, 4, 9});
  CHECK(shuffled.next() == std::vector<std::size_t>{1, 6, 7, 3});
  CHECK(shuffled.next() == std::vector<std::size_t>{0, 5});
  CHECK(shuffled.next() == std::vector<std::size_t>{3, 5, 1, 2});
  // np.random.seed(7); np.random.permutation(5) = [0, 3, 2, 1, 4]
  attn::BatchOrder seven(5, 5, true, 7);
  CHECK(seven.next() == std::vector<std::size_t>{0, 3, 2, 1, 4});
}
