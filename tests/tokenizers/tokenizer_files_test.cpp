// Loading tokenizer files: the added tokens and post-processor of a tokenizer.json worked by
// hand, and every kind of bad input ending in one InputError naming the file, the JSON path
// (or merges.txt line), what was expected and what was found.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "attn/tokenizer_files.h"
#include "error_message.h"
#include "tokenizers/added_vocabulary.h"

namespace {

namespace fs = std::filesystem;

// A fresh folder for one test case's files, removed afterwards.
struct TempFolder {
  fs::path path;
  TempFolder() {
    static int count = 0;
    path =
        fs::temp_directory_path() / ("attn_tokenizer_test_" + std::to_string(getpid()) + "_" + std::to_string(++count));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempFolder() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path / name, std::ios::binary) << content;
    return (path / name).string();
  }
  std::string str() const { return path.string(); }
};

// A tokenizer.json of a tiny BPE: <s> in front (TemplateProcessing), "<mask>" taking the
// whitespace around it, "xx" only as a word of its own.
const char* const kTinyTokenizer = R"({
  "added_tokens": [
    {"id": 0, "content": "<s>", "special": true, "lstrip": false, "rstrip": false, "single_word": false, "normalized": false},
    {"id": 6, "content": "<mask>", "special": false, "lstrip": true, "rstrip": true, "single_word": false, "normalized": false},
    {"id": 7, "content": "xx", "special": false, "lstrip": false, "rstrip": false, "single_word": true, "normalized": false}],
  "normalizer": null, "pre_tokenizer": null, "decoder": null,
  "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}}], "pair": [],
                     "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}}},
  "model": {"type": "BPE", "dropout": null, "unk_token": null, "fuse_unk": false, "byte_fallback": false,
            "vocab": {"<s>": 0, "a": 1, "b": 2, " ": 3, "ab": 4, "x": 5}, "merges": ["a b"]}})";

std::vector<std::size_t> ids_of(const attn::Tokenizer& tokenizer, const std::string& text) {
  return tokenizer.encode(text, true).ids;
}

}  // namespace

TEST_CASE("Added tokens: lstrip/rstrip take the spaces, single_word only stands alone", "[tokenizers]") {
  TempFolder folder;
  const auto tokenizer = attn::load_tokenizer_json(folder.write("tokenizer.json", kTinyTokenizer));
  CHECK(tokenizer->size() == 8);
  // "ab <mask> a": <mask> takes " " on both sides; <s> from the template in front.
  CHECK(ids_of(*tokenizer, "ab <mask> a") == std::vector<std::size_t>{0, 4, 6, 1});
  CHECK(ids_of(*tokenizer, "axx") == std::vector<std::size_t>{0, 1, 5, 5});
  CHECK(ids_of(*tokenizer, "a xx b") == std::vector<std::size_t>{0, 1, 3, 7, 3, 2});
  CHECK(tokenizer->encode("ab", false).ids == std::vector<std::size_t>{4});
  // "<s>" in the text is the token; decode skips it, and joins pieces by spaces (no decoder).
  CHECK(ids_of(*tokenizer, "<s>ab") == std::vector<std::size_t>{0, 0, 4});
  CHECK(tokenizer->decode({0, 4, 6, 1}, true) == "ab <mask> a");
  CHECK(tokenizer->is_special(0));
  CHECK_FALSE(tokenizer->is_special(6));
  CHECK(tokenizer->special_id(attn::SpecialRole::Begin) == std::optional<std::size_t>(0));
}

TEST_CASE("Text that is not UTF-8 is refused", "[tokenizers]") {
  TempFolder folder;
  const auto tokenizer = attn::load_tokenizer_json(folder.write("tokenizer.json", kTinyTokenizer));
  CHECK(attn_test::input_error_of([&] { tokenizer->encode("ab\xFF"); }) ==
        "text: expected UTF-8, found byte 255 at offset 2 that starts no UTF-8 character");
}

TEST_CASE("A folder without tokenizer files, or no folder, is refused", "[tokenizers]") {
  TempFolder folder;
  const std::string expected =
      ": expected tokenizer files (tokenizer.json; vocab.txt; vocab.json and merges.txt; or source.spm, target.spm "
      "and vocab.json), found ";
  CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) == folder.str() + expected + "none");
  folder.write("vocab.json", "{}");
  CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) ==
        folder.str() + expected + "vocab.json without merges.txt or source.spm");
  CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str() + "/nothing"); }) ==
        folder.str() + "/nothing: expected a model folder, found nothing there");
}

TEST_CASE("Truncated or hostile vocab.json is refused naming the file", "[tokenizers]") {
  TempFolder folder;
  std::ifstream real(std::string(ATTN_SOURCE_DIR) + "/tests/data/gpt2/vocab.json", std::ios::binary);
  std::string head(5000, '\0');
  real.read(head.data(), 5000);
  const std::string merges = folder.write("merges.txt", "#version: 0.2\n");
  const std::string vocab = folder.write("vocab.json", head);
  CHECK(attn_test::input_error_of([&] { attn::load_vocab_merges(vocab, merges); }) ==
        vocab + ": expected JSON, found a syntax error: the file ends early (truncated?)");
  folder.write("vocab.json", "{\"a\": 1099511627776}");
  CHECK(attn_test::input_error_of([&] { attn::load_vocab_merges(vocab, merges); }) ==
        vocab + ": \"a\": expected an integer at most 0, found the number 1099511627776");
  folder.write("vocab.json", "{\"a\": 0, \"b\": 0}");
  CHECK(attn_test::input_error_of([&] { attn::load_vocab_merges(vocab, merges); }) ==
        vocab + ": \"b\": expected each id once, found id 0 also given to \"a\"");
  folder.write("vocab.json", "{\"a\": -1}");
  CHECK(attn_test::input_error_of([&] { attn::load_vocab_merges(vocab, merges); }) ==
        vocab + ": \"a\": expected a non-negative integer, found the number -1");
  folder.write("vocab.json", std::string(100000, '['));
  CHECK(attn_test::input_error_of([&] { attn::load_vocab_merges(vocab, merges); }) ==
        vocab + ": expected JSON nested at most 64 levels deep, found deeper nesting at byte 64");
  folder.write("vocab.json", "{\"a\xFF\": 0}");
  CHECK(attn_test::input_error_of([&] { attn::load_vocab_merges(vocab, merges); }) ==
        vocab + ": expected JSON, found a syntax error at byte 4");
  // A NUL byte is refused as it is read (/dev/zero behind a link took 256 MiB of reading).
  folder.write("vocab.json", std::string("{\"a\": 0}\0", 9));
  CHECK(attn_test::input_error_of([&] { attn::load_vocab_merges(vocab, merges); }) ==
        vocab + ": expected a tokenizer file (text), found a NUL byte at byte 8");
}

TEST_CASE("A file larger than 256 MiB is refused before it is read", "[tokenizers]") {
  TempFolder folder;
  const std::string vocab = folder.write("vocab.json", "");
  fs::resize_file(vocab, 300ULL << 20);  // sparse: no 300 MiB written
  CHECK(attn_test::input_error_of([&] { attn::load_vocab_merges(vocab, vocab); }) ==
        vocab + ": expected a tokenizer file of at most 256 MiB, found 314572800 bytes");
}

TEST_CASE("merges.txt: a malformed line, or a piece not in the vocabulary, names its line", "[tokenizers]") {
  TempFolder folder;
  const std::string vocab = folder.write("vocab.json", R"({"a": 0, "b": 1, "ab": 2})");
  const std::string merges = folder.write("merges.txt", "#version: 0.2\na b\nab\n");
  CHECK(attn_test::input_error_of([&] { attn::load_vocab_merges(vocab, merges); }) ==
        merges + ": line 3: expected two pieces separated by one space (\"a b\"), found \"ab\"");
  folder.write("merges.txt", "#version: 0.2\na c\n");
  CHECK(attn_test::input_error_of([&] { attn::load_vocab_merges(vocab, merges); }) ==
        merges +
            ": line 2: expected a merge of pieces in the vocabulary, found \"a c\", whose second piece \"c\" "
            "the vocabulary lacks");
  folder.write("merges.txt", "b a\n");
  CHECK(attn_test::input_error_of([&] { attn::load_vocab_merges(vocab, merges); }) ==
        merges +
            ": line 1: expected a merge of pieces in the vocabulary, found \"b a\", whose result \"ba\" the "
            "vocabulary lacks");
}

TEST_CASE("Models other than BPE, WordPiece and Unigram are refused by name", "[tokenizers]") {
  TempFolder folder;
  const std::string path = folder.write("tokenizer.json", R"({"model": {"type": "WordLevel", "vocab": {"a": 0}}})");
  CHECK(attn_test::input_error_of([&] { attn::load_tokenizer_json(path); }) ==
        path +
            ": model.type: expected \"BPE\", \"WordPiece\" or \"Unigram\", found the string \"WordLevel\": attn "
            "does not tokenize with WordLevel models");
}

TEST_CASE("tokenizer.json: unknown steps, bad merges and colliding ids name their JSON path", "[tokenizers]") {
  TempFolder folder;
  std::string text = kTinyTokenizer;
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string changed = text;
    changed.replace(changed.find(from), from.size(), to);
    return folder.write("tokenizer.json", changed);
  };
  std::string path = with("\"pre_tokenizer\": null", "\"pre_tokenizer\": {\"type\": \"BertPreTokenizer\"}");
  CHECK(attn_test::input_error_of([&] { attn::load_tokenizer_json(path); }) ==
        path +
            ": pre_tokenizer.type: expected a pre-tokenizer attn knows (Sequence, ByteLevel, Split, Metaspace), "
            "found the string \"BertPreTokenizer\"");
  path = with("\"merges\": [\"a b\"]", "\"merges\": [\"a b\", \"ab\"]");
  CHECK(attn_test::input_error_of([&] { attn::load_tokenizer_json(path); }) ==
        path + ": model.merges[1]: expected two pieces separated by one space (\"a b\"), found the string \"ab\"");
  path = with("\"merges\": [\"a b\"]", "\"merges\": [[\"a\", \"q\"]]");
  CHECK(attn_test::input_error_of([&] { attn::load_tokenizer_json(path); }) ==
        path +
            ": model.merges[0]: expected a merge of pieces in the vocabulary, found \"a q\", whose second piece "
            "\"q\" the vocabulary lacks");
  path = with("\"id\": 7,", "\"id\": 8,");
  CHECK(attn_test::input_error_of([&] { attn::load_tokenizer_json(path); }) ==
        path +
            ": added_tokens: expected the added tokens the vocabulary lacks to take ids 6..7, found \"xx\" with id 8");
}

TEST_CASE("Added tokens: the leftmost longest match, the first listed of two alike", "[tokenizers]") {
  // Issue 31: the tokens in a trie, read once per position, match as tokenizers'
  // leftmost-longest Aho-Corasick automaton does.
  const auto token = [](const char* content, std::size_t id) {
    attn::AddedToken t;
    t.content = content;
    t.id = id;
    return t;
  };
  const attn::AddedTokenMatcher matcher(
      {token("ab", 1), token("abc", 2), token("bcd", 3), token("abc", 4), token("", 5)});
  const auto sections = matcher.split("xabcdbcd");
  REQUIRE(sections.size() == 4);
  CHECK(sections[0].text == "x");
  CHECK_FALSE(sections[0].id);
  CHECK(sections[1].id == std::optional<std::size_t>(2));  // "abc" (not "ab"), before "bcd" could start
  CHECK(sections[2].text == "d");
  CHECK(sections[3].id == std::optional<std::size_t>(3));
  CHECK(matcher.split("a").size() == 1);  // a token's prefix alone is text
}
