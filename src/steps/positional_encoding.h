// Positional encoding: what is added to the embeddings so that the model can tell the
// positions apart (attention alone sees a set, not a sequence). Sinusoidal, as the paper,
// or learned, a table of one row per position.
#ifndef ATTN_STEPS_POSITIONAL_ENCODING_H_
#define ATTN_STEPS_POSITIONAL_ENCODING_H_

#include <cstddef>

#include "attn/step_variants.h"
#include "attn/tensor.h"

namespace attn {

// seq_len S, d_model N -> (S,N): PE[pos, 2i] = sin(pos / 10000^(2i/N)),
// PE[pos, 2i+1] = cos(pos / 10000^(2i/N)), interleaved as in seed 004 and the paper.
Tensor sinusoidal_positions(std::size_t seq_len, std::size_t d_model);

// Marian's table of sinusoids (transformers' MarianSinusoidalPositionalEmbedding._init_weight),
// rows P, d_model N -> (P,N): with angle(pos, k) = pos / 10000^(2k/N), the first ⌈N/2⌉
// dimensions hold sin(angle(pos, k)) for k = 0, 1, ..., the rest cos(angle(pos, k)): the sines
// in the first half, the cosines in the second, not interleaved. Computed in float64 and
// rounded to float32, as the module stores them (a float64 sine misses the stored value by
// up to 8.5e-7). It has no gradient: the table is not learned.
Tensor sinusoidal_table(std::size_t rows, std::size_t d_model);

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

// Rotary position embedding (RoPE, Su et al. 2021), Llama's rotate-half convention: in each
// head's d numbers, dimension i (< d/2) pairs with i + d/2, and the pair of position p is
// turned by the angle p · theta^(-2i/d):
//   y[i]       = x[i] cos - x[i + d/2] sin
//   y[i + d/2] = x[i + d/2] cos + x[i] sin
// The angle of pair i at position p, as rope_rotate computes it.
double rope_angle(std::size_t position, std::size_t pair, std::size_t d_head, double theta);
// x is (B,H,S,d) (queries or keys after the head split; d even) -> (B,H,S,d), position s of
// every head and batch item rotated by its angles. Row s sits at position first_position + s
// (the KV cache turns one new row at its absolute position).
Tensor rope_rotate(const Tensor& x, double theta, std::size_t first_position = 0);
// dy is (B,H,S,d) -> dx (B,H,S,d): a rotation's gradient is the rotation back (by -angle):
//   dx[i] = dy[i] cos + dy[i + d/2] sin,  dx[i + d/2] = dy[i + d/2] cos - dy[i] sin.
Tensor rope_rotate_backward(const Tensor& dy, double theta);

// RoPE's inverse frequencies, d_head -> (d/2,): theta^(-2i/d), the angle of pair i per
// position (rope_angle's).
Tensor rope_inverse_frequencies(std::size_t d_head, double theta);
// Llama 3.1's adjustment (rope_scaling "llama3", transformers' _compute_llama3_parameters):
// inv_freq (d/2,) -> (d/2,). With L = original_max_position_embeddings and the wavelength
// λ_i = 2π / inv_freq[i] of each pair: λ < L / high_freq_factor (fast pairs) keep their
// frequency; λ > L / low_freq_factor (slow pairs) divide it by `factor`; in between,
// s = (L / λ - low_freq_factor) / (high_freq_factor - low_freq_factor) and the frequency is
// (1 - s) · inv_freq / factor + s · inv_freq. It has no gradient: no weight goes into it.
Tensor llama3_rope_frequencies(const Tensor& inv_freq, const RopeScaling& scaling);
// The frequencies RoPE turns by: rope_inverse_frequencies, adjusted when scaling.llama3.
Tensor rope_frequencies(std::size_t d_head, double theta, const RopeScaling& scaling);
// rope_rotate and its backward with given frequencies (r/2,): pair (i, i + r/2) of position
// p turns by p · inv_freq[i]. r = d turns every number of the head; r < d is partial rotary
// (GPT-NeoX's rotary_pct, Phi's partial_rotary_factor): the frequencies are those of an
// r-wide head (rope_frequencies(r, ...)) and the last d - r numbers pass unturned.
Tensor rope_rotate(const Tensor& x, const Tensor& inv_freq, std::size_t first_position = 0);
Tensor rope_rotate_backward(const Tensor& dy, const Tensor& inv_freq);

}  // namespace attn

#endif  // ATTN_STEPS_POSITIONAL_ENCODING_H_
