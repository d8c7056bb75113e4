// Positional encoding: what is added to the embeddings so that the model can tell the
// positions apart (attention alone sees a set, not a sequence). Sinusoidal, as the paper,
// or learned, a table of one row per position.
#ifndef ATTN_STEPS_POSITIONAL_ENCODING_H_
#define ATTN_STEPS_POSITIONAL_ENCODING_H_

#include <cstddef>

#include "attn/tensor.h"

namespace attn {

// seq_len S, d_model N -> (S,N): PE[pos, 2i] = sin(pos / 10000^(2i/N)),
// PE[pos, 2i+1] = cos(pos / 10000^(2i/N)), interleaved as in seed 004 and the paper.
Tensor sinusoidal_positions(std::size_t seq_len, std::size_t d_model);

// table is (max_len,N) -> its first seq_len rows (S,N).
Tensor learned_positions(const Tensor& table, std::size_t seq_len);
// dpositions is (S,N), dtable is (max_len,N) -> dtable[0:S] += dpositions; the rows past S
// were not used and get nothing.
void learned_positions_backward(const Tensor& dpositions, Tensor& dtable);

// x is (B,S,N), positions is (S,N) -> x + positions, the same rows added to every batch item.
Tensor add_positions(const Tensor& x, const Tensor& positions);
// dy is (B,S,N) -> dpositions (S,N) = Σ_b dy[b]: every sentence's gradient, since each used
// the same rows. (dx = dy: an addition passes the gradient on unchanged.)
Tensor add_positions_backward(const Tensor& dy);

}  // namespace attn

#endif  // ATTN_STEPS_POSITIONAL_ENCODING_H_
