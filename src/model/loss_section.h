// The input's labels and output_grad: what `attn grad` differentiates (docs/model-file.md).
// With an output head the loss is the cross-entropy of input.labels, one token per output
// position; without one it is sum(output ⊙ input.output_grad).
#ifndef ATTN_MODEL_LOSS_SECTION_H_
#define ATTN_MODEL_LOSS_SECTION_H_

#include <string>

#include "attn/model.h"
#include "attn/run_input.h"
#include "model/json_reader.h"
#include "model/load_context.h"

namespace attn {

// Reads input.labels or input.output_grad of the input object `value` at `path` into the
// run input, once everything else is read: labels are checked against the output positions
// (the target's when the model has a decoder) and the vocabulary; output_grad must have
// the final output's shape, and its "randn" is drawn after every weight, so that adding it
// changes no other number of the file.
void read_loss_section(LoadContext& context, const Json& value, const std::string& path, const Model& model,
                       RunInput& input);

// The final output's shape as the file would write it: (B, L, W), or (L, W) when the input
// is one sequence; L the target's length with a decoder, else the source's; W d_model, or
// H*d_head after an attention block without W_o.
Shape final_output_shape(const Model& model, const RunInput& input);

// attn grad on a causal (decoder-only) model with an output head, one sentence and no
// labels: the loss of its text's own next tokens, as Hugging Face's labels=input_ids
// (shifted inside the loss). The input becomes the tokens but the last, the labels the
// tokens but the first, and the tokens step notes it. False (nothing changed) otherwise.
bool use_next_tokens_as_labels(const Model& model, RunInput& input);

}  // namespace attn

#endif  // ATTN_MODEL_LOSS_SECTION_H_
