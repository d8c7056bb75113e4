// GPT-2's tokenizer (tests/data/gpt2: vocab.json + merges.txt, MIT) against the ids of
// gpt-3-encoder@1.1.4, OpenAI's GPT-2 BPE in JavaScript, on the whole corpus.
#include <catch2/catch.hpp>

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
}

TEST_CASE("GPT-2 decodes half a character as U+FFFD", "[tokenizers]") {
  const auto tokenizer = attn::load_tokenizer(kGpt2Folder);
  // "Ã" is byte C3 alone: not UTF-8, one U+FFFD (String::from_utf8_lossy, TextDecoder).
  CHECK(tokenizer->decode({tokenizer->find("Ã").value(), tokenizer->find("a").value()}, true) ==
        "\xEF\xBF\xBD"
        "a");
}

}  // namespace
