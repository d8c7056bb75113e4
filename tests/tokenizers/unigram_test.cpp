// Unigram tokenizer.json: against transformers.js's ids on a tokenizer.json made of a tiny
// SentencePiece model, the model's Viterbi against python3-sentencepiece's own
// segmentation of every corpus word (unknown characters fused, byte fallback), and worked
// examples of the scores.
#include <catch2/catch.hpp>

#include <map>

#include "attn/tokenizer_files.h"
#include "error_message.h"
#include "tokenizers/precompiled_charsmap.h"
#include "tokenizers/reference_ids.h"
#include "tokenizers/temp_folder.h"

namespace {

const std::string kUnigram = std::string(ATTN_SOURCE_DIR) + "/tests/reference/sentencepiece/unigram";

// The tokenizer.json at `path` with no normalizer and Metaspace alone: a word is "▁" + word,
// as SentencePiece's dummy prefix makes it.
std::unique_ptr<attn::Tokenizer> model_alone(const attn_test::TempFolder& folder, const std::string& path) {
  nlohmann::json document = nlohmann::json::parse(attn_test::read_text(path));
  document["normalizer"] = nullptr;
  document["added_tokens"] = nlohmann::json::array();
  document["pre_tokenizer"] = document["decoder"];
  return attn::load_tokenizer_json(folder.write("tokenizer.json", document.dump()));
}

// A Unigram tokenizer.json of the given [piece, score] pairs, no pipeline around the model.
std::string tiny(const std::string& vocab, const std::string& unk_id, bool byte_fallback) {
  return R"({"added_tokens": [], "normalizer": null, "pre_tokenizer": null, "post_processor": null,
             "decoder": null, "model": {"type": "Unigram", "unk_id": )" +
         unk_id + R"(, "byte_fallback": )" + (byte_fallback ? "true" : "false") + R"(, "vocab": )" + vocab + "}}";
}

// The words of a text between its spaces (" " only).
std::vector<std::string> split_spaces(const std::string& text) {
  std::vector<std::string> words;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = std::min(text.find(' ', pos), text.size());
    if (end > pos) words.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return words;
}

}  // namespace

TEST_CASE("A Unigram tokenizer.json gives transformers.js's ids", "[tokenizers][unigram]") {
  const auto tokenizer = attn::load_tokenizer(kUnigram);
  CHECK(tokenizer->kind() == "Unigram");
  attn_test::check_against_reference(*tokenizer, "unigram");
  CHECK(tokenizer->special_id(attn::SpecialRole::Unknown) == std::optional<std::size_t>(0));
  CHECK(tokenizer->display_piece(*tokenizer->find("\u2581the")) == "\u2423the");
}

TEST_CASE("Unigram's Viterbi gives sentencepiece's segmentation of every corpus word", "[tokenizers][unigram]") {
  attn_test::TempFolder folder("unigram");
  const auto plain = model_alone(folder, kUnigram + "/tokenizer.json");
  const auto bytes = model_alone(folder, kUnigram + "/byte_fallback.json");
  const nlohmann::json reference = attn_test::read_reference("unigram_words");
  std::size_t words = 0, plain_differ = 0, bytes_differ = 0;
  std::string first;
  for (const auto& item : reference.at("cases")) {
    const std::string word = item.at("word").get<std::string>();
    ++words;
    const auto plain_ids = plain->encode(word, false).ids;
    const auto bytes_ids = bytes->encode(word, false).ids;
    plain_differ += plain_ids != item.at("plain").get<std::vector<std::size_t>>();
    bytes_differ += bytes_ids != item.at("byte_fallback").get<std::vector<std::size_t>>();
    if (first.empty() && (plain_differ || bytes_differ))
      first = attn::printable(word) + ": " + attn_test::show_ids(plain_ids) + " / " + attn_test::show_ids(bytes_ids);
  }
  INFO(words << " words; first difference: " << first);
  CHECK(words >= 600);
  CHECK(plain_differ == 0);
  CHECK(bytes_differ == 0);
}

TEST_CASE("Unigram worked by hand: scores summed, ties to the first path, unknowns fused", "[tokenizers][unigram]") {
  attn_test::TempFolder folder("unigram");
  const std::string vocab = R"([["<unk>", 0.0], ["a", -1.0], ["b", -2.0], ["ab", -3.0], ["c", -1.5], ["bc", -3.25]])";
  const auto tokenizer = attn::load_tokenizer_json(folder.write("t.json", tiny(vocab, "0", false)));
  // "ab": the piece "ab" (-3) ties "a" + "b" (-1 - 2); the path found first, ending at "ab", wins.
  CHECK(tokenizer->encode("ab", false).pieces == std::vector<std::string>{"ab"});
  // "abc": a + bc = -4.25 beats ab + c = -4.5.
  CHECK(tokenizer->encode("abc", false).pieces == std::vector<std::string>{"a", "bc"});
  // "x" and "y" no piece spells: each scores min(score) - 10 = -13.25; two in a row fuse into
  // one <unk>.
  const attn::Encoding unknown = tokenizer->encode("axyb", false);
  CHECK(unknown.ids == std::vector<std::size_t>{1, 0, 2});
  CHECK(unknown.unknown == std::vector<bool>{false, true, false});
  // The unknown score decides: with "y" scoring 9.5, <unk> for "x" (-5 - 10 = -15) and "y"
  // make -5.5, just below the piece "xy" (-5); were the penalty 9, the pair would win.
  const std::string penalty_vocab = R"([["<unk>", 0.0], ["xy", -5.0], ["y", 9.5]])";
  const auto penalty = attn::load_tokenizer_json(folder.write("p.json", tiny(penalty_vocab, "0", false)));
  CHECK(penalty->encode("xy", false).pieces == std::vector<std::string>{"xy"});
  CHECK(penalty->encode("xyy", false).pieces == std::vector<std::string>{"xy", "y"});
  // With byte fallback, the fused span becomes the bytes of "é" (0xC3 0xA9), each a piece.
  const std::string bytes_vocab = R"([["<unk>", 0.0], ["a", -1.0], ["<0xC3>", -5.0], ["<0xA9>", -5.0]])";
  const auto fallback = attn::load_tokenizer_json(folder.write("b.json", tiny(bytes_vocab, "0", true)));
  CHECK(fallback->encode("aé", false).ids == std::vector<std::size_t>{1, 2, 3});
  // A byte the vocabulary lacks: <unk> for the whole span.
  CHECK(fallback->encode("aè", false).ids == std::vector<std::size_t>{1, 0});
  // No unknown token at all: the text is refused in one line.
  const auto no_unk = attn::load_tokenizer_json(folder.write("n.json", tiny(vocab, "null", false)));
  CHECK(attn_test::input_error_of([&] { no_unk->encode("ax", false); }) ==
        "text: expected text the Unigram vocabulary can spell, found \"x\", which no piece spells, and the model has "
        "no unknown token (unk_id null)");
}

TEST_CASE("Hostile Unigram files end in one line naming the file", "[tokenizers][unigram]") {
  attn_test::TempFolder folder("unigram");
  const auto error = [&](const std::string& vocab, const std::string& unk_id) {
    const std::string path = folder.write("tokenizer.json", tiny(vocab, unk_id, false));
    return attn_test::input_error_of([&] { attn::load_tokenizer_json(path); });
  };
  const std::string file = folder.str() + "/tokenizer.json: ";
  CHECK(error(R"([["a", 0.0], ["a", -1.0]])", "0") ==
        file + "model.vocab[1][0]: expected each piece once (also at id 0), found the string \"a\"");
  CHECK(error(R"([["a", "x"]])", "0") ==
        file + "model.vocab[0][1]: expected a number (the piece's log probability), found the string \"x\"");
  CHECK(error(R"([["a", 0.0]])", "3") == file + "model.unk_id: expected an integer at most 0, found the number 3");
  CHECK(error(R"([])", "0") == file + "model.vocab: expected a vocabulary of [piece, score] pairs, found an array");
}

TEST_CASE("Precompiled: SentencePiece's normalization table gives sentencepiece's text and ids",
          "[tokenizers][unigram]") {
  // marian/source.spm (nmt_nfkc's table) as a tokenizer.json: Precompiled, Strip, runs of
  // spaces to one, Metaspace (make_sentencepiece_references.py).
  const std::string path = kUnigram + "/precompiled.json";
  const auto tokenizer = attn::load_tokenizer_json(path);
  const nlohmann::json document = nlohmann::json::parse(attn_test::read_text(path));
  const attn::PrecompiledCharsmap charsmap(
      document["normalizer"]["normalizers"][0]["precompiled_charsmap"].get<std::string>(), path, "");
  // Where tokenizers' rule and SentencePiece's part, worked by hand from precompiled.rs:
  // SentencePiece replaces the longest entry the text starts with; tokenizers looks a
  // grapheme cluster of fewer than 6 bytes up whole and takes the first (shortest) entry it
  // starts with, and a longer cluster one character at a time.
  const std::map<std::string, std::string> tokenizers_rule = {
      // a + U+0308 + U+0304 (5 bytes): "a\u0308" -> "ä" is met first; the macron is dropped.
      {"a\u0308\u0304", "\u2581\u00E4"},
      // Hangul jamo (9 bytes): no jamo alone is in the table; SentencePiece composes "각".
      {"\u1100\u1161\u11A8", "\u2581\u1100\u1161\u11A8"},
      // a and five marks (11 bytes): each alone unmapped; SentencePiece makes "à" first.
      {"a\u0300\u0301\u0302\u0303\u0304", "\u2581a\u0300\u0301\u0302\u0303\u0304"}};
  const nlohmann::json reference = attn_test::read_reference("precompiled");
  std::size_t texts = 0, text_differ = 0, ids_differ = 0, by_rule = 0;
  std::string first;
  for (const auto& item : reference.at("cases")) {
    const std::string text = item.at("text").get<std::string>();
    ++texts;
    // SentencePiece's normalized text (its pieces joined): the table's text with the spaces
    // at the ends dropped, runs of spaces made one, each space "▁" and one in front.
    std::string spelled;
    for (const std::string& word : split_spaces(charsmap.normalize(text))) spelled += "\u2581" + word;
    if (const auto rule = tokenizers_rule.find(text); rule != tokenizers_rule.end()) {
      ++by_rule;
      CHECK(spelled == rule->second);
      CHECK(spelled != item.at("normalized").get<std::string>());
      continue;
    }
    const auto ids = tokenizer->encode(text, false).ids;
    text_differ += spelled != item.at("normalized").get<std::string>();
    ids_differ += ids != item.at("ids").get<std::vector<std::size_t>>();
    if (first.empty() && (text_differ || ids_differ))
      first = attn::printable(text) + ": " + attn::printable(spelled) + " " + attn_test::show_ids(ids);
  }
  INFO(texts << " texts; first difference: " << first);
  CHECK(texts >= 250);
  CHECK(by_rule == tokenizers_rule.size());
  CHECK(text_differ == 0);
  CHECK(ids_differ == 0);
}
