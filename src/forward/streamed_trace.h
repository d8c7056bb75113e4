// What a walkthrough that streams keeps of the trace: as each new layer starts, it forgets
// the layers before it (present/walkthrough.cpp), and the memory estimate counts the trace
// as holding what this says is kept (forward/run_memory.cpp). One rule for both.
#ifndef ATTN_FORWARD_STREAMED_TRACE_H_
#define ATTN_FORWARD_STREAMED_TRACE_H_

#include <optional>

#include "attn/step_roles.h"
#include "attn/trace.h"

namespace attn {

inline bool same_layer(const StepId& a, const StepId& b) { return a.stack == b.stack && a.layer == b.layer; }

// Whether `id` starts a layer other than `running` (the layer of the entries before it).
inline bool starts_new_layer(const StepId& id, const std::optional<StepId>& running) {
  return id.in_layer() && (!running || !same_layer(*running, id));
}

// Whether kept entry `e` is forgotten when an entry `now` of a new layer arrives, `finished`
// the layer that ran before it. The layers before are not looked at again, except the
// results of the one just finished (the new layer's input) and of the encoder's last layer
// (the decoder's memory), and every layer's output when the logit lens reads them (`lens`).
// Entries outside the layers (tokens, masks, input) stay. So the trace holds about two
// layers, however deep the model.
inline bool forgotten_at_new_layer(const StepId& e, const StepId& now, const std::optional<StepId>& finished,
                                   int last_encoder_layer, bool lens) {
  if (!e.in_layer() || same_layer(e, now)) return false;
  if (lens && is_layer_output(e.kind)) return false;
  const bool kept_result =
      (finished && same_layer(e, *finished)) || (e.stack == Stack::Encoder && e.layer == last_encoder_layer);
  // Entries a later layer reads: a layer's outputs (B,S,N), which the next layer's first
  // steps and the decoder's cross-attention take as input.
  return !(kept_result && is_block_result(e.kind));
}

}  // namespace attn

#endif  // ATTN_FORWARD_STREAMED_TRACE_H_
