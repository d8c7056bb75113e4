// From token ids to the encoder's input: embedding lookup and positional encoding.
#ifndef ATTN_STEPS_EMBEDDING_H_
#define ATTN_STEPS_EMBEDDING_H_

#include <cstddef>

#include "attn/tensor.h"

namespace attn {

// ids is (B,S), table is (V,N) -> table[ids] is (B,S,N): row ids[b][s] of the table.
// (Equivalent to one_hot(ids) @ table, without the multiplications.)
Tensor embedding_lookup(const Tensor& ids, const Tensor& table);

// x is (B,S,N) -> x * sqrt(N), as the paper scales embeddings before adding positions.
Tensor scale_embedding(const Tensor& x);

// (S,N): PE[pos, 2i] = sin(pos / 10000^(2i/N)), PE[pos, 2i+1] = cos(pos / 10000^(2i/N)),
// interleaved as in seed 004 and the paper.
Tensor sinusoidal_positions(std::size_t seq_len, std::size_t d_model);

// table is (max_len,N) -> its first seq_len rows (S,N).
Tensor learned_positions(const Tensor& table, std::size_t seq_len);

// x is (B,S,N), positions is (S,N) -> x + positions, the same rows added to every batch item.
Tensor add_positions(const Tensor& x, const Tensor& positions);

}  // namespace attn

#endif  // ATTN_STEPS_EMBEDDING_H_
