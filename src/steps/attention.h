// The steps of multi-head attention, one function each: split the projected queries, keys
// and values into heads, score every query against every key, scale, mask, softmax,
// weigh the values, merge the heads. (The projections themselves are projection.h's;
// the masks are made in masks.h.) They compute and never print; the forward pass
// (forward.h) records what they return into the trace.
//
// Shapes, outermost first: B batch, S query positions, T key positions (T = S in
// self-attention), N d_model, H heads, d head size.
#ifndef ATTN_STEPS_ATTENTION_H_
#define ATTN_STEPS_ATTENTION_H_

#include <cstddef>

#include <vector>

#include "attn/step_variants.h"
#include "attn/tensor.h"

namespace attn {

// x is (B,S,H*d) -> (B,S,H,d): a reshape, no data moves. Head h owns columns h*d .. h*d+d-1.
Tensor split_heads_reshape(const Tensor& x, std::size_t num_heads);

// x is (B,S,H*d) -> (B,S,H,d) -> (B,H,S,d): heads first, so each head is one (S,d) matrix.
Tensor split_heads(const Tensor& x, std::size_t num_heads);
// dheads is (B,H,S,d) -> dx (B,S,H*d): the gradient moves back where its number came from,
// which is merge_heads.
Tensor split_heads_backward(const Tensor& dheads);

// Grouped-query attention: kv is (B,G,T,d), G key/value heads -> (B,H,T,d), H = G · r query
// heads, head h a copy of kv head h / r (r = H / G consecutive query heads share one; G = 1
// is multi-query attention). Nothing is computed: the same keys read by r heads.
Tensor repeat_kv_heads(const Tensor& kv, std::size_t num_heads);
// drepeated is (B,H,T,d) -> dkv (B,G,T,d): each kv head gets the sum of its r copies'
// gradients (a tensor read r times gets r gradients).
Tensor repeat_kv_heads_backward(const Tensor& drepeated, std::size_t num_kv_heads);

// k is (B,H,T,d) -> k_t is (B,H,d,T): the last two axes swapped.
Tensor transpose_keys(const Tensor& k);
// dk_t is (B,H,d,T) -> dk (B,H,T,d): transposed back.
Tensor transpose_keys_backward(const Tensor& dk_t);

// q is (B,H,S,d), k_t is (B,H,d,T) -> q @ k_t is (B,H,S,T): scores[b,h,i,j] = q_i . k_j.
Tensor attention_scores(const Tensor& q, const Tensor& k_t);
// The gradients of a product c = a @ b: da = dc @ bᵀ, db = aᵀ @ dc.
struct ProductGradients {
  Tensor da, db;
};
// q is (B,H,S,d), k_t is (B,H,d,T), dscores is (B,H,S,T) -> dq = dscores @ k_tᵀ (B,H,S,d),
// dk_t = qᵀ @ dscores (B,H,d,T).
ProductGradients attention_scores_backward(const Tensor& q, const Tensor& k_t, const Tensor& dscores);

// scores is (B,H,S,T) -> scores / sqrt(d_head), same shape; with times_inverse_root
// scores · d_head^-0.5 instead (transformers' eager attention, ModelConfig's
// scores_times_inverse_root): the same bits when sqrt(d_head) is a power of two.
Tensor scale_scores(const Tensor& scores, std::size_t d_head, bool times_inverse_root = false);
// dscaled is (B,H,S,T) -> dscores = dscaled / sqrt(d_head) (dscaled · d_head^-0.5), same shape.
Tensor scale_scores_backward(const Tensor& dscaled, std::size_t d_head, bool times_inverse_root = false);
// The same as the model scales them: / sqrt(d_head) (· d_head^-0.5 with times_inverse_root),
// or (ScoreScale::None, GPT-Neo) the scores as they are; and its backward (dscores = dscaled then).
Tensor scale_scores(const Tensor& scores, std::size_t d_head, ScoreScale scale, bool times_inverse_root = false);
Tensor scale_scores_backward(const Tensor& dscaled, std::size_t d_head, ScoreScale scale,
                             bool times_inverse_root = false);

// scores is (B,H,S,T), mask is (S,T) or (B,S,T), additive (0 or -inf) -> scores + mask,
// the mask broadcast over heads (and batch when it is (S,T)).
Tensor apply_mask(const Tensor& scores, const Tensor& mask);
// dmasked is (B,H,S,T), mask as above -> dscores: the gradient passes through where the
// mask is 0 and is exactly 0 where it is -inf (a hidden key's score changes nothing).
Tensor apply_mask_backward(const Tensor& dmasked, const Tensor& mask);

// scores is (...,T) -> (...,T): each row's softmax, exp(x - max) / sum, the maximum
// subtracted first so exp never overflows. A row whose entries are all -inf (every key
// masked) gets all-zero weights; the number of such rows is written to
// *fully_masked_rows when given.
Tensor softmax_rows(const Tensor& scores, std::size_t* fully_masked_rows = nullptr);
// weights and dweights are (...,T) -> dscores (...,T), row by row:
//   dscores = weights ⊙ (dweights - Σ_j dweights[j] weights[j])
// (the Jacobian of softmax, diag(w) - w wᵀ, applied to dweights). A fully masked row, all
// zero weights, gets zero gradients.
Tensor softmax_rows_backward(const Tensor& weights, const Tensor& dweights);

// Steps 3b to 4 at once: scores (B,H,S,T) and mask ((S,T), (B,S,T) or nullptr) -> scaled
// (scale_scores with the model's scale), masked (apply_mask; empty without a mask) and
// weights (softmax_rows), the same bits as the three one after the other. From
// kExactMaxElements scores they are made in one pass over each row while it is in the
// cache, which also checks the scores and the masked scores, so that the trace need not
// read them again (Trace::Check).
struct ScoresToWeights {
  Tensor scaled, masked, weights;
  std::size_t fully_masked_rows = 0;
  // Whether the pass found every score finite, and every masked score finite or -inf;
  // false also when it did not look (below kExactMaxElements).
  bool scores_checked = false, masked_checked = false;
};
// keep_scaled false: the scaled and masked scores are not kept (shapes alone, no numbers)
// when the pass computes them (from kExactMaxElements scores): a run that nothing reads
// them from writes two tensors fewer.
ScoresToWeights scores_to_weights(const Tensor& scores, const Tensor* mask, std::size_t d_head, ScoreScale scale,
                                  bool times_inverse_root, bool keep_scaled = true);

// weights is (B,H,S,T), v is (B,H,T,d) -> weights @ v is (B,H,S,d): each row a weighted
// sum of value rows.
Tensor attention_context(const Tensor& weights, const Tensor& v);
// Ablation (attn explain --ablate): context is (B,H,S,d) -> (B,H,S,d), the rows of each
// head in `heads` replaced: by zeros, or with `mean` by that head's mean over the S
// positions of its batch item (summed in position order, then divided by S). The other
// heads pass through unchanged.
Tensor ablate_heads(const Tensor& context, const std::vector<std::size_t>& heads, bool mean);
// weights is (B,H,S,T), v is (B,H,T,d), dcontext is (B,H,S,d) -> dweights = dcontext @ vᵀ
// (B,H,S,T), dv = weightsᵀ @ dcontext (B,H,T,d).
ProductGradients attention_context_backward(const Tensor& weights, const Tensor& v, const Tensor& dcontext);

// context is (B,H,S,d) -> (B,S,H,d): positions first again, heads side by side for each position.
Tensor merge_heads_transpose(const Tensor& context);

// context is (B,H,S,d) -> (B,S,H,d) -> (B,S,H*d): the heads' outputs concatenated.
Tensor merge_heads(const Tensor& context);
// dconcat is (B,S,H*d) -> dcontext (B,H,S,d): split_heads.
Tensor merge_heads_backward(const Tensor& dconcat, std::size_t num_heads);

}  // namespace attn

#endif  // ATTN_STEPS_ATTENTION_H_
