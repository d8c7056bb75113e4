#include "steps/tokenizer.h"

#include <catch2/catch.hpp>
#include "attn/error.h"
#include "error_message.h"

using attn_test::error_message_of;

using Tokens = std::vector<std::string>;

TEST_CASE("split_tokens: whitespace separates words, punctuation stands alone", "[tokenizer]") {
  CHECK(attn::split_tokens("I love AI") == Tokens{"I", "love", "AI"});
  CHECK(attn::split_tokens("  I love AI.  ") == Tokens{"I", "love", "AI", "."});
  CHECK(attn::split_tokens("Hello, world!") == Tokens{"Hello", ",", "world", "!"});
  // apostrophes and hyphens stay inside words: seed 004's French target
  CHECK(attn::split_tokens("J' aime l' IA") == Tokens{"J'", "aime", "l'", "IA"});
  CHECK(attn::split_tokens("don't self-attend") == Tokens{"don't", "self-attend"});
  // non-ASCII letters are word characters
  CHECK(attn::split_tokens("café über") == Tokens{"café", "über"});
  CHECK(attn::split_tokens("") == Tokens{});
  // special tokens stay whole; a lone < is punctuation
  CHECK(attn::split_tokens("<BOS> J' aime") == Tokens{"<BOS>", "J'", "aime"});
  CHECK(attn::split_tokens("a < b <>") == Tokens{"a", "<", "b", "<", ">"});
}

TEST_CASE("vocabulary lookup: exact, then case-insensitive", "[tokenizer]") {
  const attn::Vocabulary vocab({"<PAD>", "<UNK>", "I", "love", "AI"});
  CHECK(vocab.find("love") == 3u);
  CHECK(vocab.find("ai") == 4u);
  CHECK_FALSE(vocab.find("robots"));
  CHECK(vocab.pad_id() == 0u);
  CHECK(vocab.unknown_id() == 1u);
}

// The model loader refuses these inputs with the file and JSON path (model_file_test.cpp):
// reaching the tokenizer with one is a bug, reported as an internal error.
TEST_CASE("a vocabulary with a duplicate token is an internal error", "[tokenizer][errors]") {
  CHECK(error_message_of<attn::InternalError>([] {
          attn::Vocabulary({"a", "b", "a"});
        }) == "Vocabulary: duplicate token \"a\" (the loader lets none through)");
}

TEST_CASE("lookup_token_ids pads with <PAD> and maps unknown words to <UNK>", "[tokenizer]") {
  // Seed 004: "I love AI" -> [2, 3, 4]
  const attn::Vocabulary vocab({"<PAD>", "<UNK>", "I", "love", "AI"});
  const attn::TokenIds one = attn::lookup_token_ids({{"I", "love", "AI"}}, vocab);
  CHECK(one.ids.shape == attn::Shape{1, 3});
  CHECK(one.ids.data == std::vector<double>{2, 3, 4});

  const attn::TokenIds two = attn::lookup_token_ids({{"I", "love", "robots"}, {"AI"}}, vocab);
  CHECK(two.ids.data == std::vector<double>{2, 3, 1, 4, 0, 0});
  CHECK(two.tokens[1] == Tokens{"AI", "<PAD>", "<PAD>"});
  CHECK(two.unknown[0] == std::vector<bool>{false, false, true});
  CHECK(two.lengths == std::vector<std::size_t>{3, 1});
}

TEST_CASE("lookup_token_ids without <UNK> or <PAD> is an internal error naming what is missing",
          "[tokenizer][errors]") {
  const attn::Vocabulary vocab({"I", "love"});
  CHECK(error_message_of<attn::InternalError>([&] {
          attn::lookup_token_ids({{"I", "hate"}}, vocab);
        }) ==
        "lookup_token_ids: unknown token \"hate\" and the vocabulary has no \"<UNK>\" (check_token_input lets none "
        "through)");
  CHECK(error_message_of<attn::InternalError>([&] {
          attn::lookup_token_ids({{"I", "love"}, {"I"}}, vocab);
        }) ==
        "lookup_token_ids: sentences of different lengths and no \"<PAD>\" (check_token_input lets none through)");
}
