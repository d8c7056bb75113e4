// From token ids to vectors: the embedding lookup, and the paper's scaling of the
// embeddings by sqrt(d_model). (The positions added next are positional_encoding.h's.)
#ifndef ATTN_STEPS_EMBEDDING_H_
#define ATTN_STEPS_EMBEDDING_H_

#include "attn/tensor.h"

namespace attn {

// ids is (B,S), table is (V,N) -> table[ids] is (B,S,N): row ids[b][s] of the table.
// (Equivalent to one_hot(ids) @ table, without the multiplications.)
Tensor embedding_lookup(const Tensor& ids, const Tensor& table);
// ids is (B,S), dx is (B,S,N), dtable is (V,N) -> dtable[ids[b][s]] += dx[b][s] for every
// position in order: a scatter-add, since a token that occurs twice gets both positions'
// gradients (and a tied output head adds its own share to the same table).
void embedding_lookup_backward(const Tensor& ids, const Tensor& dx, Tensor& dtable);

// BERT's token types: type_ids is (B,S) (0 for the first sentence, 1 for the second),
// table is (types,N) -> table[type_ids] is (B,S,N), the rows added to the embeddings.
Tensor token_type_rows(const Tensor& type_ids, const Tensor& table);
// type_ids is (B,S), drows is (B,S,N) = dL/d(the rows added), dtable is (types,N) ->
// dtable[type_ids[b][s]] += drows[b][s], position by position (one sentence: every row's
// gradient summed into row 0). dL/d(the embeddings) is drows itself: an addition.
void token_type_rows_backward(const Tensor& type_ids, const Tensor& drows, Tensor& dtable);

// x is (B,S,N) -> x * sqrt(N), as the paper scales embeddings before adding positions.
Tensor scale_embedding(const Tensor& x);
// dscaled is (B,S,N) -> dx = dscaled * sqrt(N).
Tensor scale_embedding_backward(const Tensor& dscaled);

}  // namespace attn

#endif  // ATTN_STEPS_EMBEDDING_H_
