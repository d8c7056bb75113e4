// One run's input, apart from the model that runs it (attn/model.h): what the encoder or a
// decoder-only model reads (numbers X, or text or tokens looked up in the vocabulary), what
// an encoder-decoder's decoder reads, and what attn grad differentiates. The model file's
// "input" section is read into one (load_model, attn/model_file.h); a sentence on the
// command line, a training batch or a generated token makes another, and the model stays as
// it was loaded.
#ifndef ATTN_RUN_INPUT_H_
#define ATTN_RUN_INPUT_H_

#include <string>
#include <vector>

#include "attn/parameters.h"
#include "attn/tensor.h"

namespace attn {

// Text or token input, before tokenizing and lookup.
struct TokenInput {
  std::vector<std::string> texts;                // given as text: split by the tokenize step
  std::vector<std::vector<std::string>> tokens;  // given as tokens, one list per batch item
  bool batched = false;                          // the file gave a list of sentences
  std::string json_path;                         // where it came from ("input.text"), for messages
  // No target was given: the decoder starts from <BOS> alone (attn explain then appends
  // the model's own greedy predictions, as generating does).
  bool from_bos = false;
  // Per sentence, whether attn explain's greedy run stopped because the last position
  // predicts <EOS> (extend_target_greedily): what that position writes, for the lesson.
  std::vector<bool> predicts_end;
  // What the learner should know about this input (a <BOS> put in front, say): shown under
  // its tokens step and recorded with the trace's warnings.
  std::vector<std::string> notes;

  bool empty() const { return texts.empty() && tokens.empty(); }
};

// One attention head whose context an ablation replaces (--ablate): head `head` of the
// self-attention of layer `layer` of `stack` (the encoder's attention, the decoder's masked
// self-attention).
struct HeadAblation {
  Stack stack = Stack::Decoder;
  int layer = 0;
  std::size_t head = 0;
  bool operator==(const HeadAblation& o) const { return stack == o.stack && layer == o.layer && head == o.head; }
};

// What a run changes in the model's computation without changing the model: the heads
// ablated (their context zeroed, or with `mean` replaced by its mean over positions,
// recorded as <block>.context_ablated, docs/heads.md).
struct Ablation {
  std::vector<HeadAblation> heads;
  bool mean = false;
  bool empty() const { return heads.empty(); }
  // The heads ablated in one stack's layer, in the order given.
  std::vector<std::size_t> heads_of(Stack stack, int layer) const {
    std::vector<std::size_t> out;
    for (const HeadAblation& h : heads)
      if (h.stack == stack && h.layer == layer) out.push_back(h.head);
    return out;
  }
};

struct RunInput {
  bool batched = true;  // false when the input was one sequence: print without B

  // The source: either numbers X (B,S,N), or tokens looked up in the vocabulary.
  Tensor X;                       // (B, S, N) when given as X
  TokenInput source_tokens;       // when given as text or tokens
  Tensor target_X;                // (B, T, N) when the decoder input is given as X
  bool target_X_batched = false;  // target_X was (B, T, N) in the file
  TokenInput target_tokens;

  // What attn grad differentiates (docs/model-file.md): with an output head, the label of
  // every output position, (B,T) token ids, <PAD> where nothing is learned (after a
  // sentence's end too); without one, output_grad, dL/d(the final output), shaped like it
  // with the B axis. Empty when the file gives none; a sentence on the command line drops
  // them (they belong to the file's input).
  Tensor labels;
  Tensor output_grad;

  // The heads this run ablates (attn explain and attn heads --ablate); none by default.
  Ablation ablation;
  // Whether the run records the logit lens (attn explain --lens): after every layer of the
  // last stack, its final norm and the output head, lens.<l>.norm/.logits/.probabilities.
  bool lens = false;

  bool has_tokens() const { return !source_tokens.empty(); }
};

}  // namespace attn

#endif  // ATTN_RUN_INPUT_H_
