#include "steps/embedding.h"

#include <catch2/catch.hpp>

#include "attn/error.h"

namespace {
// Seed 004's embedding table: <PAD>, <UNK>, I, love, AI, you.
attn::Tensor seed004_table() {
  attn::Tensor E({6, 4}, {"V", "N"});
  E.data = {0.00, 0.00, 0.00, 0.00, 0.12, 0.34, 0.56, 0.78, 0.10, 0.20, 0.30, 0.40,
            0.50, 0.10, 0.80, 0.20, 0.90, 0.70, 0.20, 0.10, 0.15, 0.25, 0.35, 0.45};
  return E;
}
}  // namespace

TEST_CASE("embedding lookup is row indexing (seed 004 step 4)", "[embedding]") {
  attn::Tensor ids({1, 3}, {"B", "S"});
  ids.data = {2, 3, 4};  // "I love AI"
  const attn::Tensor x = attn::embedding_lookup(ids, seed004_table());
  REQUIRE(x.shape == attn::Shape{1, 3, 4});
  CHECK(x.data == std::vector<double>{0.10, 0.20, 0.30, 0.40, 0.50, 0.10, 0.80, 0.20, 0.90, 0.70, 0.20, 0.10});
  // an id past the table is a bug upstream (the tokenizer only makes ids of the vocabulary)
  ids.data = {2, 6, 4};
  CHECK_THROWS_AS(attn::embedding_lookup(ids, seed004_table()), attn::InternalError);
}

TEST_CASE("scaling by sqrt(d_model)", "[embedding]") {
  attn::Tensor x({1, 1, 4}, {"B", "S", "N"});
  x.data = {1, 2, 3, 4};
  CHECK(attn::scale_embedding(x).data == std::vector<double>{2, 4, 6, 8});
}

TEST_CASE("embedding_lookup_backward adds each position's gradient to its token's row", "[embedding][backward]") {
  // ids [[2, 3, 2]]: row 2 gets positions 0 and 2, row 3 position 1, the others nothing
  attn::Tensor ids({1, 3}, {"B", "S"});
  ids.data = {2, 3, 2};
  attn::Tensor dx({1, 3, 2}, {"B", "S", "N"});
  dx.data = {1, 2, 10, 20, 100, 200};
  attn::Tensor dtable({4, 2}, {"V", "N"});
  dtable.data[0] = 0.5;  // it adds to what is there (a tied head's share, another sequence's)
  attn::embedding_lookup_backward(ids, dx, dtable);
  CHECK(dtable.data == std::vector<double>{0.5, 0, 0, 0, 101, 202, 10, 20});
  // scaling by sqrt(N) scales the gradient by the same
  attn::Tensor d({1, 1, 4}, {"B", "S", "N"});
  d.data = {1, -2, 0.5, 0};
  CHECK(attn::scale_embedding_backward(d).data == std::vector<double>{2, -4, 1, 0});
}
