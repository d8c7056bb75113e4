// The forward pass: calls the step functions in order and records each result into the
// trace under its documented name (docs/trace-names.md).
#ifndef ATTN_FORWARD_H_
#define ATTN_FORWARD_H_

#include "attn/model.h"
#include "attn/trace.h"

namespace attn {

// Runs the whole model: tokens and embeddings (or X), the encoder stack, the decoder
// stack and the output head, whichever the model has. Returns the last tensor computed
// (probabilities with an output head, else the last layer's output).
Tensor run_model(const Model& model, Trace& trace);

// With no target given (the decoder reads <BOS> alone, TokenInput::from_bos) and an output
// head, appends the model's own greedy predictions to the target, as generating text does:
// one run of the model per token, at most `max_tokens`, each sentence ending after <EOS>
// (the ended ones padded with <PAD>). Tokens a model never writes (<PAD>, <UNK>, <BOS>) are
// never picked. Returns how many tokens each sentence gained.
std::size_t extend_target_greedily(Model& model, std::size_t max_tokens);
// How many tokens attn explain generates so: enough for the decoder's input (<BOS> and them)
// to be as long as the source's longest sentence, at least two so that the causal mask has
// something to hide, at most 8.
std::size_t generated_length(const Model& model);

}  // namespace attn

#endif  // ATTN_FORWARD_H_
