#include "steps/tokenizer.h"
#include "tokenizers/word_tokenizer.h"

#include <catch2/catch.hpp>
#include "attn/error.h"
#include "error_message.h"

using attn_test::error_message_of;

using Tokens = std::vector<std::string>;

TEST_CASE("lookup_token_ids pads with <PAD> and maps unknown words to <UNK>", "[tokenizer]") {
  // Seed 004: "I love AI" -> [2, 3, 4]
  const attn::WordTokenizer vocab(attn::Vocabulary({"<PAD>", "<UNK>", "I", "love", "AI"}));
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
  const attn::WordTokenizer vocab(attn::Vocabulary({"I", "love"}));
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
