// One run of a model's forward program: what an architecture lays its forward out with
// (src/arch/<name>.cpp, and the paper's own in forward/transformer.cpp). The same program
// serves a full run over an input and a cached generation step of one new token: the run
// knows which it is, so the calls below record the inputs, masks, layer results, final norm
// and head as each kind of run does, while the blocks of forward/layers.h record the rest
// (and read or fill the KV cache through their scope).
#ifndef ATTN_FORWARD_PROGRAM_H_
#define ATTN_FORWARD_PROGRAM_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "attn/model.h"
#include "attn/run_input.h"
#include "forward/run_context.h"
#include "forward/trace_scope.h"

namespace attn {

class Program {
 public:
  // A full run of `input`; `context`: the ablation, the KV cache the run fills.
  Program(const Model& model, const RunInput& input, Trace& trace, const RunContext& context);
  // A cached step (context.step): token `token` at context.position, one new row.
  Program(const Model& model, std::size_t token, Trace& trace, const RunContext& context);

  const Model& model() const { return model_; }
  bool step() const { return context_.step; }
  // The scope of a sequence's entries, and of layer `index` of `stack` over it.
  TraceScope scope(Sequence sequence) const { return TraceScope(trace_, sequence, &context_); }
  TraceScope layer(Sequence sequence, Stack stack, int index) const { return scope(sequence).layer(stack, index); }
  // The sequence a decoder reads: the target, or a decoder-only model's input.
  Sequence decoder_sequence() const { return model_.has_target() ? Sequence::Target : Sequence::Source; }

  // A sequence's input X, (B,S,N) (the target's (B,T,N)): the tokens' ids, embeddings and
  // positions, or the numbers given, recorded as its `input`. A step: the new token's row,
  // E[id] (· √N) + PE[position], (1,1,N).
  Traced input(Sequence sequence);
  // The LayerNorm of a sequence's summed embeddings x (B,S,N) (BERT's, the model's
  // embedding_norm), recorded as embedding.norm: what the first layer reads.
  Traced embedding_norm(const Traced& x);
  // Llama 3.1's RoPE frequencies (rope_scaling "llama3"), (d/2,): recorded once, before the
  // layers, when the model has them (not in a step).
  void rope_frequencies();
  // The mask of a stack's self-attention over x (B,S,N): the decoder's causal one, the
  // encoder's when the model is causal; with the sequence's padding and the sliding window.
  // None for an encoder neither causal nor padded, and none in a step (its one row sees every
  // key it reads).
  std::optional<Traced> self_mask(const Traced& x, Stack stack);
  // The mask of the causal self-attention layers the sliding window applies to when it does
  // not apply to all (model.windowed_layers: GPT-Neo's local layers), recorded as the
  // stack's window_mask: the causal mask (with the padding) hiding the keys W or more
  // positions back. None in a step (the layer's cached keys are cut to its window) and
  // without a window.
  std::optional<Traced> window_mask(const Traced& x, Stack stack);
  // The mask of a decoder's cross-attention, y (B,T,N) to the source: the source's padding,
  // when it was padded (never in a step).
  std::optional<Traced> cross_mask(const Traced& y);

  // A layer of `stack` is done, x its result: the logit lens reads the last stack's.
  void layer_done(const Traced& x, Stack stack);
  // The stack's final norm of x, recorded as its final_norm; x itself when it has none.
  Traced final_norm(Traced x, const NormWeights& norm, Sequence sequence, Stack stack);
  // The output head over `hidden` (B,T,N): logits and probabilities (B,T,V), then the logit
  // lens when the run asks for it. Returns the probabilities. With RunContext::head_ids (attn
  // patch), the logits of those ids alone at the last row, (B,1,k), returned as they are.
  Tensor head(const Traced& hidden, Sequence rows);

 private:
  Traced step_input(Sequence sequence);

  const Model& model_;
  const RunInput* input_;  // nullptr in a step
  Trace& trace_;
  const RunContext& context_;
  std::size_t token_ = 0;
  std::optional<Traced> padding_[2];  // per sequence, when its sentences were padded
  std::vector<Traced> lens_;          // the last stack's layer results, for the logit lens
};

// Runs `model`'s forward program (its architecture's, else the paper's) as `run`.
Tensor run_forward(const Model& model, Program& run);

// run_model (attn/forward.h) with what the run reads besides the model: the ablation, and
// the KV cache a full run fills.
Tensor run_program(const Model& model, const RunInput& input, Trace& trace, const RunContext& context);

// The paper's forward program, which runs attn's own model files: an encoder-decoder, an
// encoder alone, or a decoder-only model, as the model file says (forward/transformer.cpp).
Tensor transformer_forward(const Model& model, Program& run);

// The output head: (B,T,N) @ (N,V) -> (B,T,V) logits, softmax over the vocabulary; recorded
// as output.logits and output.probabilities, or as the logit lens's (`logits`, `p`, number).
// A head with a transform (BERT's MLM head) first computes act(x W_t + b_t) and its
// LayerNorm, recorded as output.transform and output.transform_norm (the lens's:
// lens.<number>.transform, transform_norm).
Traced output_head(const Model& model, const Traced& hidden, const TraceScope& at,
                   StepKind logits_kind = StepKind::Logits, StepKind p = StepKind::Probabilities, int number = 0);

}  // namespace attn

#endif  // ATTN_FORWARD_PROGRAM_H_
