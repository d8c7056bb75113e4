// Short "why" texts for each kind of step, in plain words, for the walkthrough to print under
// a step's formula (and to leave out with --brief). The texts are the rows of
// present/explanations.def, one per key the table of step kinds (attn/step_kinds.def) names;
// only explanations.cpp reads them, so rewording one rebuilds one object. Each text
// is already wrapped: lines joined by "\n", none wider than kExplanationWidth columns, no
// trailing newline.
#ifndef ATTN_PRESENT_EXPLANATIONS_H_
#define ATTN_PRESENT_EXPLANATIONS_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "present/print_limits.h"

namespace attn {

// The text for a key of present/explanations.def's rows, or nullptr when there is none:
// a row's explanation column (tokenize, embedding, ..., loss), or a variant a printer picks
// (subword_tokenize, learned_positions, multiple_heads, sliding_window, padding_mask,
// rms_norm, swiglu, the stacks' and blocks' texts, and backward: attn grad's banner before
// the backward pass)
const char* explanation_for(std::string_view step_kind);

// Every key that has a text, in the table's order (each beside the step it explains).
std::vector<std::string_view> explained_step_kinds();

}  // namespace attn

#endif  // ATTN_PRESENT_EXPLANATIONS_H_
