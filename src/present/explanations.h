// Short "why" texts for each kind of step, in plain words, for the walkthrough to print under
// a step's formula (and to leave out with --brief). Written for this project. Each text is
// already wrapped: lines joined by "\n", none wider than kExplanationWidth columns, no
// trailing newline.
#ifndef ATTN_PRESENT_EXPLANATIONS_H_
#define ATTN_PRESENT_EXPLANATIONS_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "present/print_limits.h"

namespace attn {

// The text for a step kind, or nullptr when there is none. The kinds:
//   tokenize, subword_tokenize (a checkpoint's tokenizer), input, embedding,
//   positional_encoding, learned_positions, projection_q, projection_k,
//   projection_v, split_heads, multiple_heads, transpose_k, scores, scale, causal_mask,
//   padding_mask, softmax, context, merge_heads, output_projection, residual, layer_norm,
//   feed_forward, encoder_stack, decoder_stack, decoder_only_stack, decoder_self_attention,
//   cross_attention, output_softmax, loss and backward (attn grad: the loss step, and the
//   banner before the backward pass)
const char* explanation_for(std::string_view step_kind);

// Every kind that has a text, in the order a walkthrough meets them.
std::vector<std::string_view> explained_step_kinds();

}  // namespace attn

#endif  // ATTN_PRESENT_EXPLANATIONS_H_
