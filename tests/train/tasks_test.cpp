// The built-in tasks' data: what each pair says (checked against French and sorting written
// out by hand), and held-out examples that training never sees.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "attn/train.h"
#include "error_message.h"

namespace {

using Tokens = std::vector<std::string>;

std::string joined(const Tokens& t) {
  std::string out;
  for (const auto& s : t) out += (out.empty() ? "" : " ") + s;
  return out;
}

Tokens label_tokens(const attn::Model& model, const attn::Example& e) {
  Tokens out;
  for (std::size_t id : e.labels) out.push_back(model.vocab.token(id));
  return out;
}

// source text -> the French the labels spell (without <EOS>)
std::vector<std::pair<std::string, std::string>> translations(const attn::TrainingTask& task,
                                                              const attn::Dataset& data) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : data.examples) {
    Tokens labels = label_tokens(task.model, e);
    REQUIRE(labels.back() == "<EOS>");
    labels.pop_back();
    out.push_back({joined(e.source), joined(labels)});
  }
  return out;
}

}  // namespace

TEST_CASE("translate: the grammar's French, I love AI held out", "[train][tasks]") {
  const attn::TrainingTask task = attn::make_task("translate");
  const auto train = translations(task, task.train);
  const auto held_out = translations(task, task.held_out);
  // 6 subjects x 5 verbs x (AI + 10 nouns x 2 articles x (no colour + 3 colours))
  CHECK(train.size() + held_out.size() == 6 * 5 * (1 + 10 * 2 * 4));
  CHECK(held_out.size() == 300);
  CHECK(held_out.front() == std::pair<std::string, std::string>{"I love AI", "J' aime l' IA"});
  std::set<std::string> seen;
  for (const auto& p : train) seen.insert(p.first);
  for (const auto& p : held_out) CHECK(seen.count(p.first) == 0);
  // agreement, elision, articles and the colour after the noun, written out by hand
  std::vector<std::pair<std::string, std::string>> all = train;
  all.insert(all.end(), held_out.begin(), held_out.end());
  const auto french = [&](const std::string& english) {
    for (const auto& p : all)
      if (p.first == english) return p.second;
    return std::string("(missing)");
  };
  CHECK(french("she eats the red apple") == "Elle mange la pomme rouge");
  CHECK(french("I have an apple") == "J' ai une pomme");
  CHECK(french("I see a black dog") == "Je vois un chien noir");
  CHECK(french("we see the tree") == "Nous voyons l' arbre");
  CHECK(french("they want a green car") == "Ils veulent une voiture verte");
  CHECK(french("you love the water") == "Tu aimes l' eau");
  CHECK(french("he has an apple") == "Il a une pomme");
  // the decoder reads <BOS> and the French, and learns it shifted by one
  const attn::Example& first = task.held_out.examples.front();
  CHECK(first.target == Tokens{"<BOS>", "J'", "aime", "l'", "IA"});
  CHECK(label_tokens(task.model, first) == Tokens{"J'", "aime", "l'", "IA", "<EOS>"});
  // the smallest that learns the corpus: d_model 4 reaches 14% held out, 6 reaches 99%
  CHECK(task.model.config.d_model == 6);
  CHECK(task.model.config.d_ff == 24);
}

TEST_CASE("copy and reverse: the output is the input (reversed), held out unseen", "[train][tasks]") {
  for (const char* name : {"copy", "reverse"}) {
    INFO(name);
    const attn::TrainingTask task = attn::make_task(name);
    CHECK(task.train.examples.size() == 3000);
    CHECK(task.held_out.examples.size() == 200);
    std::set<Tokens> seen;
    for (const auto& e : task.train.examples) seen.insert(e.source);
    for (const auto& e : task.held_out.examples) {
      CHECK(seen.count(e.source) == 0);
      CHECK(e.source.size() >= 4);
      CHECK(e.source.size() <= 8);
      Tokens expected = e.source;
      if (std::string(name) == "reverse") std::reverse(expected.begin(), expected.end());
      expected.push_back("<EOS>");
      CHECK(label_tokens(task.model, e) == expected);
    }
  }
}

TEST_CASE("sort: decoder-only, labels on the sorted half then <EOS>", "[train][tasks]") {
  const attn::TrainingTask task = attn::make_task("sort");
  CHECK(task.model.config.architecture == attn::Architecture::DecoderOnly);
  CHECK_FALSE(task.model.has_target());
  CHECK(task.model.encoder.empty());
  CHECK(task.train.examples.size() + task.held_out.examples.size() == 729);  // 3^6
  std::set<Tokens> seen;
  for (const auto& e : task.train.examples) seen.insert(e.source);
  for (const auto& e : task.held_out.examples) {
    CHECK(seen.count(e.source) == 0);
    // "<BOS> d1..d6 = s1..s6": position t predicts token t+1, from "=" on
    REQUIRE(e.source.size() == 14);
    CHECK(e.source[7] == "=");
    Tokens digits(e.source.begin() + 1, e.source.begin() + 7), sorted = digits;
    std::sort(sorted.begin(), sorted.end());
    CHECK(Tokens(e.source.begin() + 8, e.source.end()) == sorted);
    const Tokens labels = label_tokens(task.model, e);
    CHECK(Tokens(labels.begin(), labels.begin() + 7) == Tokens(7, "<PAD>"));
    CHECK(Tokens(labels.begin() + 7, labels.end() - 1) == sorted);
    CHECK(labels.back() == "<EOS>");  // read at the last sorted digit: generation stops there
  }
}

TEST_CASE("a task's sizes can be replaced, and a wrong name is refused", "[train][tasks]") {
  attn::TaskSizes sizes;
  sizes.d_model = 12;
  sizes.heads = 3;
  const attn::TrainingTask task = attn::make_task("translate", sizes);
  CHECK(task.model.config.d_model == 12);
  CHECK(task.model.config.num_heads == 3);
  CHECK(task.description.find("d_model 12, 3 heads, d_ff 24") != std::string::npos);
  CHECK(attn_test::input_error_of([] { attn::make_task("dance"); }) ==
        "attn train: --task: expected one of copy, reverse, sort, translate, induction, found \"dance\"");
}
