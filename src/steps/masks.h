// Masks: which keys each query may attend to. Boolean masks mark what is hidden (1 = hidden);
// additive masks are what gets added to the scores (0 = visible, -inf = hidden).
#ifndef ATTN_STEPS_MASKS_H_
#define ATTN_STEPS_MASKS_H_

#include <cstddef>

#include "attn/tensor.h"

namespace attn {

// ids is (B,S) -> (B,S): 1 where the token is padding (pad_id), 0 elsewhere.
Tensor padding_mask(const Tensor& ids, std::size_t pad_id);

// query_len S, key_len T -> (S,T) additive: 0 where query i may see key j (j <= i), -inf
// above the diagonal.
Tensor causal_mask(std::size_t query_len, std::size_t key_len);

// query_len S, key_len T, window W -> (S,T) additive: the causal mask plus -inf for the keys
// more than W-1 back, so that query i sees keys i-W+1 .. i only (Mistral's sliding window).
// It is a constant: no gradient goes through it (apply_mask_backward passes dL/dscores
// where it is 0).
Tensor sliding_window_mask(std::size_t query_len, std::size_t key_len, std::size_t window);

// The additive mask for one attention block: (S,T) when only causal, or (B,S,T) when
// key_padding (B,T, 1 = padded key) is given; -inf where query i must not see key j
// (j > i when causal, also j <= i - window with a sliding window; padded keys always).
// A window (> 0) applies to a causal mask only.
Tensor attention_mask(std::size_t query_len, std::size_t key_len, bool causal, const Tensor* key_padding,
                      std::size_t window = 0);

}  // namespace attn

#endif  // ATTN_STEPS_MASKS_H_
