// The BPE model on vocabularies small enough to work by hand: merges by rank, leftmost on
// ties, ignore_merges, byte fallback and the unknown token (models/bpe/model.rs, word.rs).
#include <catch2/catch.hpp>

#include "tokenizers/bpe_model.h"

namespace {

attn::BpeVocabulary vocabulary_of(const std::vector<std::string>& pieces) {
  attn::BpeVocabulary vocabulary;
  vocabulary.pieces = pieces;
  for (std::size_t i = 0; i < pieces.size(); ++i) vocabulary.ids[pieces[i]] = i;
  return vocabulary;
}

std::vector<std::size_t> encode(const attn::BpeModel& model, const attn::BpeVocabulary& vocabulary,
                                const std::string& word, std::vector<bool>* unknown_out = nullptr) {
  std::vector<std::size_t> ids;
  std::vector<bool> unknown;
  model.encode_word(vocabulary, word, ids, unknown);
  if (unknown_out) *unknown_out = unknown;
  return ids;
}

}  // namespace

TEST_CASE("BPE applies the merge of lowest rank first", "[tokenizers]") {
  //                                    0    1    2    3     4
  const auto vocabulary = vocabulary_of({"a", "b", "c", "ab", "bc"});
  // b+c ranks first: "abc" -> a, bc.
  const attn::BpeModel bc_first({{1, 2, 4}, {0, 1, 3}}, {});
  CHECK(encode(bc_first, vocabulary, "abc") == std::vector<std::size_t>{0, 4});
  // a+b ranks first: "abc" -> ab, c.
  const attn::BpeModel ab_first({{0, 1, 3}, {1, 2, 4}}, {});
  CHECK(encode(ab_first, vocabulary, "abc") == std::vector<std::size_t>{3, 2});
}

TEST_CASE("BPE merges the leftmost pair on a tie and keeps merging the results", "[tokenizers]") {
  const auto vocabulary = vocabulary_of({"a", "aa", "aaaa"});
  const attn::BpeModel model({{0, 0, 1}, {1, 1, 2}}, {});
  // a a a -> (aa) a; a a a a a -> (aa)(aa) a -> (aaaa) a.
  CHECK(encode(model, vocabulary, "aaa") == std::vector<std::size_t>{1, 0});
  CHECK(encode(model, vocabulary, "aaaaa") == std::vector<std::size_t>{2, 0});
}

TEST_CASE("ignore_merges takes a word the vocabulary has as one token", "[tokenizers]") {
  const auto vocabulary = vocabulary_of({"a", "c", "ac"});
  attn::BpeOptions options;
  CHECK(encode(attn::BpeModel({}, options), vocabulary, "ac") == std::vector<std::size_t>{0, 1});
  options.ignore_merges = true;
  CHECK(encode(attn::BpeModel({}, options), vocabulary, "ac") == std::vector<std::size_t>{2});
}

TEST_CASE("byte_fallback spells a missing character as its <0xNN> pieces", "[tokenizers]") {
  const auto vocabulary = vocabulary_of({"<unk>", "a", "<0xC3>", "<0xA9>"});
  attn::BpeOptions options;
  options.byte_fallback = true;
  options.unk_id = 0;
  CHECK(encode(attn::BpeModel({}, options), vocabulary, "aé") == std::vector<std::size_t>{1, 2, 3});
  // "ß" is C3 9F: <0x9F> is missing, so the unknown token instead.
  std::vector<bool> unknown;
  CHECK(encode(attn::BpeModel({}, options), vocabulary, "ßa", &unknown) == std::vector<std::size_t>{0, 1});
  CHECK(unknown == std::vector<bool>{true, false});
}

TEST_CASE("fuse_unk makes consecutive unknown characters one unknown token", "[tokenizers]") {
  const auto vocabulary = vocabulary_of({"<unk>", "a"});
  attn::BpeOptions options;
  options.unk_id = 0;
  CHECK(encode(attn::BpeModel({}, options), vocabulary, "xya") == std::vector<std::size_t>{0, 0, 1});
  options.fuse_unk = true;
  CHECK(encode(attn::BpeModel({}, options), vocabulary, "xya") == std::vector<std::size_t>{0, 1});
  // Without an unknown token, tokenizers drops the character.
  CHECK(encode(attn::BpeModel({}, attn::BpeOptions{}), vocabulary, "xya") == std::vector<std::size_t>{1});
}
