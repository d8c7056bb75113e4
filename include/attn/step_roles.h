// What an entry is to the code that reads a run, asked by the role it plays (the model's
// output logits, a layer's attention pattern, the heads' context, a stack's final norm)
// rather than by its kind. The table of step kinds says what each kind is; the forward
// that records a kind, its backward and its printers name it; every other reader (the
// experiments, the dumps, the estimate, the lesson's pictures) asks here, so that adding
// or changing a kind changes this file and not each of them.
#ifndef ATTN_STEP_ROLES_H_
#define ATTN_STEP_ROLES_H_

#include "attn/trace.h"

namespace attn {

struct Model;
struct NormWeights;

// The model's own output head: its scores for every vocabulary token (not a lens's).
bool is_output_logits(StepKind kind);
// The head's softmax over the vocabulary (not a lens's).
bool is_output_probabilities(StepKind kind);
// Either: what the model outputs.
bool is_model_output(StepKind kind);
// A step of the output head, the transform before it (BERT's MLM head) included.
bool in_output_head(StepKind kind);
// The norm after a stack's last layer (encoder.norm, decoder.norm), which the head reads.
bool is_final_norm(StepKind kind);
// A sequence's token ids, as the run read them (tokens.ids).
bool is_token_ids(StepKind kind);
// A layer's attention pattern: each head's weights over the keys, rows summing to 1.
bool is_attention_pattern(StepKind kind);
// The heads' context (weights V), before they are merged: what ablation and patching replace.
bool is_heads_context(StepKind kind);
// The LayerNorm of the model's input (BERT's embeddings, each of BART's stacks) or of its
// head's transform (BERT's): a step of its own outside the layers, numbered only to tell
// its weights apart.
bool is_embedding_or_head_norm(StepKind kind);
// The attention block's output (concat W_o), which the residual adds.
bool is_attention_output(StepKind kind);
// A layer's result: the residual stream after the layer, which the next layer reads.
bool is_layer_output(StepKind kind);
// The last entry of one of a layer's blocks, (B,S,N), which a later block reads: the
// layer's output, the attention's output (its merged heads when it has no W_o), the
// feed-forward's output.
bool is_block_result(StepKind kind);

// An entry that may hold -inf where a key is hidden: a mask, and the scores once it is added.
bool may_hold_masked_infinity(StepKind kind);
// The attention's projections X·W (Q, K, V), before any bias or split.
bool is_projection(StepKind kind);
// "q", "k" or "v": the projection an entry is, or the one its heads are split from.
const char* projection_letter(StepKind kind);

// A step of the logit lens (--lens): the final norm, the head's transform (BERT's) and
// the output head after a layer, which read the run and which nothing learns through.
bool in_logit_lens(StepKind kind);

// What the numbers of a kind's entries stand for, which is how the dumps store them.
enum class EntryValues { Real, Integer, Boolean };
EntryValues entry_values(StepKind kind);

// The output logits of `sequence`'s run.
StepId output_logits_id(Sequence sequence);
// The output probabilities that the loss `loss` (or a gradient of the head) was taken of:
// the same place, the head's probabilities.
StepId output_probabilities_like(StepId id);
// The heads' context of the attention block `in_block` belongs to.
StepId heads_context_of(StepId in_block);

// The norm weights a norm entry (a layer's, a stack's, the embeddings', the head
// transform's) applied, or nullptr.
const NormWeights* norm_weights_of(const Model& model, const StepId& id);

// Which queries, keys and values the scores and the context of id's block read, as the
// trace recorded them (the heads as they came: split, normed, rotated, repeated): the
// scores' first operand, k_t's operand, the context's second; the split heads when the
// entry is not in the trace.
StepKind attending_queries(const Trace& trace, const StepId& id);
StepKind attended_keys(const Trace& trace, const StepId& id);
StepKind attended_values(const Trace& trace, const StepId& id);
// Whether id's block added a mask to its scores, as the trace recorded them: its softmax
// read the masked scores, else the scaled scores.
bool masks_scores(const Trace& trace, const StepId& id);

}  // namespace attn

#endif  // ATTN_STEP_ROLES_H_
