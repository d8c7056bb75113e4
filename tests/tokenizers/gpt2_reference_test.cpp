// GPT-2's tokenizer (tests/data/gpt2: vocab.json + merges.txt, MIT) against the ids of
// gpt-3-encoder@1.1.4, OpenAI's GPT-2 BPE in JavaScript, on the whole corpus; and the same
// files as a tokenizer.json against transformers.js's ids.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "attn/tokenizer_files.h"
#include "tokenizers/reference_ids.h"

namespace {

const std::string kGpt2Folder = std::string(ATTN_SOURCE_DIR) + "/tests/data/gpt2";

TEST_CASE("GPT-2 from vocab.json + merges.txt gives gpt-3-encoder's ids for every corpus text", "[tokenizers]") {
  const auto tokenizer = attn::load_tokenizer(kGpt2Folder);
  CHECK(tokenizer->kind() == "byte-level BPE");
  CHECK(tokenizer->size() == 50257);
  attn_test::check_against_reference(*tokenizer, "gpt2");
}

TEST_CASE("GPT-2 matches <|endoftext|> in the text and skips it when decoding", "[tokenizers]") {
  const auto tokenizer = attn::load_tokenizer(kGpt2Folder);
  // "Hello" 15496, "<|endoftext|>" 50256, " world" 995 (gpt-3-encoder's ids of the parts).
  const attn::Encoding encoding = tokenizer->encode("Hello<|endoftext|> world");
  CHECK(encoding.ids == std::vector<std::size_t>{15496, 50256, 995});
  CHECK(encoding.pieces == std::vector<std::string>{"Hello", "<|endoftext|>", "Ġworld"});
  CHECK(tokenizer->decode(encoding.ids, true) == "Hello world");
  CHECK(tokenizer->decode(encoding.ids, false) == "Hello<|endoftext|> world");
  CHECK(tokenizer->is_special(50256));
  CHECK_FALSE(tokenizer->is_special(995));
  CHECK(tokenizer->special_id(attn::SpecialRole::End) == std::optional<std::size_t>(50256));
  CHECK(tokenizer->special_id(attn::SpecialRole::Begin) == std::optional<std::size_t>(50256));
  CHECK_FALSE(tokenizer->special_id(attn::SpecialRole::Pad).has_value());
}

TEST_CASE("GPT-2's pieces as a learner reads them", "[tokenizers]") {
  const auto tokenizer = attn::load_tokenizer(kGpt2Folder);
  CHECK(tokenizer->display_piece(tokenizer->find("Ġcat").value()) == "␣cat");
  CHECK(tokenizer->display_piece(tokenizer->find("Ċ").value()) == "\\n");
  CHECK(tokenizer->display_piece(tokenizer->find("Ġ").value()) == "␣");
  CHECK(tokenizer->display_piece(tokenizer->find("ĉ").value()) == "\\t");
  // "é" is one piece spelling bytes C3 A9; "Ã" alone is byte C3, half a character.
  CHECK(tokenizer->display_piece(tokenizer->find("Ã©").value()) == "é");
  CHECK(tokenizer->display_piece(tokenizer->find("Ã").value()) == "<0xC3>");
  CHECK(tokenizer->display_piece(50256) == "<|endoftext|>");
  // "😀" (F0 9F 98 80) after a space is two pieces: " " and the first three bytes, then the last.
  const attn::Encoding emoji = tokenizer->encode(" \xF0\x9F\x98\x80");
  REQUIRE(emoji.ids.size() == 2);
  CHECK(tokenizer->display_piece(emoji.ids[0]) == "␣<0xF0><0x9F><0x98>");
  CHECK(tokenizer->display_piece(emoji.ids[1]) == "<0x80>");
}

TEST_CASE("GPT-2 decodes half a character as U+FFFD", "[tokenizers]") {
  const auto tokenizer = attn::load_tokenizer(kGpt2Folder);
  // "Ã" is byte C3 alone: not UTF-8, one U+FFFD (String::from_utf8_lossy, TextDecoder).
  CHECK(tokenizer->decode({tokenizer->find("Ã").value(), tokenizer->find("a").value()}, true) ==
        "\xEF\xBF\xBD"
        "a");
}

}  // namespace

namespace {

namespace fs = std::filesystem;

// GPT-2's tokenizer.json as the Hub spells it, built from vocab.json and merges.txt the way
// make_tokenizer_references.mjs builds the one it gave transformers.js.
std::string write_gpt2_tokenizer_json(const fs::path& folder) {
  std::ifstream vocab_in(kGpt2Folder + "/vocab.json");
  const nlohmann::json vocab = nlohmann::json::parse(vocab_in);
  nlohmann::json merges = nlohmann::json::array();
  std::ifstream merges_in(kGpt2Folder + "/merges.txt");
  for (std::string line; std::getline(merges_in, line);) {
    if (!line.empty() && line.rfind("#version", 0) != 0) merges.push_back(line);
  }
  const nlohmann::json byte_level = {
      {"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
  const nlohmann::json document = {{"added_tokens",
                                    {{{"id", 50256},
                                      {"content", "<|endoftext|>"},
                                      {"single_word", false},
                                      {"lstrip", false},
                                      {"rstrip", false},
                                      {"normalized", true},
                                      {"special", true}}}},
                                   {"normalizer", nullptr},
                                   {"pre_tokenizer", byte_level},
                                   {"post_processor", byte_level},
                                   {"decoder", byte_level},
                                   {"model",
                                    {{"type", "BPE"},
                                     {"dropout", nullptr},
                                     {"unk_token", nullptr},
                                     {"continuing_subword_prefix", ""},
                                     {"end_of_word_suffix", ""},
                                     {"fuse_unk", false},
                                     {"byte_fallback", false},
                                     {"vocab", vocab},
                                     {"merges", merges}}}};
  fs::create_directories(folder);
  const std::string path = (folder / "tokenizer.json").string();
  std::ofstream(path) << document.dump();
  return path;
}

TEST_CASE("GPT-2's tokenizer.json (ByteLevel pre-tokenizer) gives transformers.js's ids", "[tokenizers]") {
  const fs::path folder = fs::temp_directory_path() / ("attn_gpt2_tokenizer_json_" + std::to_string(getpid()));
  const std::string path = write_gpt2_tokenizer_json(folder);
  const auto tokenizer = attn::load_tokenizer_json(path);
  fs::remove_all(folder);
  CHECK(tokenizer->kind() == "byte-level BPE");
  CHECK(tokenizer->size() == 50257);
  attn_test::check_against_reference(*tokenizer, "gpt2_tokenizer_json");
}

}  // namespace
