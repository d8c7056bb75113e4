// The forward pass: calls the step functions in order and records each result into the
// trace under its documented name (docs/trace-names.md).
#ifndef ATTN_FORWARD_H_
#define ATTN_FORWARD_H_

#include "attn/model.h"
#include "attn/run_input.h"
#include "attn/trace.h"

namespace attn {

// Runs the whole model on `input`: tokens and embeddings (or X), the encoder stack, the decoder
// stack and the output head, whichever the model has. Returns the last tensor computed
// (probabilities with an output head, else the last layer's output).
Tensor run_model(const Model& model, const RunInput& input, Trace& trace);

// With no target given (the decoder reads <BOS> alone, TokenInput::from_bos) and an output
// head, appends the model's own greedy predictions to the target, as generating text does:
// one run of the model per token, at most `max_tokens`, a sentence ending when it predicts
// <EOS>: the <EOS> is not appended (the decoder's last position is the one that predicts it),
// and in a batch the ended sentences are padded with <PAD> while the others go on. Tokens a
// model never writes (<PAD>, <UNK>, <BOS>) are never picked. Returns how many tokens were
// appended to each sentence.
std::size_t extend_target_greedily(const Model& model, RunInput& input, std::size_t max_tokens);
// How many tokens attn explain generates so: up to two more than the source's longest
// sentence (a translation may be longer than its source: "I love AI" -> "J' aime l' IA"),
// at most 15; a trained model stops earlier, at its <EOS>.
std::size_t generated_length(const RunInput& input);

}  // namespace attn

#endif  // ATTN_FORWARD_H_
