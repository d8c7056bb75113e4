// What one run of the forward program reads besides the model and its input: the heads it
// ablates, and the KV cache of a generation, which a full run fills (prefill) and a step
// reads and appends to (KvCacheDecoder, attn/generate.h).
#ifndef ATTN_FORWARD_RUN_CONTEXT_H_
#define ATTN_FORWARD_RUN_CONTEXT_H_

#include <cstddef>
#include <functional>
#include <vector>

#include "attn/generate.h"
#include "attn/run_input.h"

namespace attn {

// A run that starts at a layer (attn patch, src/interp/): every layer before layer `layer` of
// `stack` (the encoder's before the decoder's) is not computed; its output is another run's,
// recorded as the layer's output (so the hooks on it run), and the run goes on from there.
struct ResumeAt {
  Stack stack = Stack::Decoder;
  int layer = 0;
  // The output of layer `index` of `stack`, (B,S,N), as the run resumed computed it.
  std::function<Tensor(Stack stack, int index)> output;
};

struct RunContext {
  const Ablation* ablation = nullptr;        // the heads zeroed (--ablate); nullptr: none
  std::vector<LayerCache>* cache = nullptr;  // one per decoder layer; nullptr: no cache
  // A cached step: the run is one new row at `position`, every earlier key and value read
  // from the cache. Otherwise a full run (which fills the cache when there is one).
  bool step = false;
  std::size_t position = 0;
  // attn patch: the layers before this point are another run's (nullptr: every layer runs).
  const ResumeAt* resume = nullptr;
  // attn patch and attribute: the output head computes the logits of these vocabulary ids
  // alone, at the last position, (B,1,k), and no probabilities (nullptr: the whole head).
  const std::vector<std::size_t>* head_ids = nullptr;
};

}  // namespace attn

#endif  // ATTN_FORWARD_RUN_CONTEXT_H_
