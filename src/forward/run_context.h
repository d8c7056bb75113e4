// What one run of the forward program reads besides the model and its input: the heads it
// ablates, and the KV cache of a generation, which a full run fills (prefill) and a step
// reads and appends to (KvCacheDecoder, attn/generate.h).
#ifndef ATTN_FORWARD_RUN_CONTEXT_H_
#define ATTN_FORWARD_RUN_CONTEXT_H_

#include <cstddef>
#include <vector>

#include "attn/generate.h"
#include "attn/run_input.h"

namespace attn {

struct RunContext {
  const Ablation* ablation = nullptr;        // the heads zeroed (--ablate); nullptr: none
  std::vector<LayerCache>* cache = nullptr;  // one per decoder layer; nullptr: no cache
  // A cached step: the run is one new row at `position`, every earlier key and value read
  // from the cache. Otherwise a full run (which fills the cache when there is one).
  bool step = false;
  std::size_t position = 0;
};

}  // namespace attn

#endif  // ATTN_FORWARD_RUN_CONTEXT_H_
