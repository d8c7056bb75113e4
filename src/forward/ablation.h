// Ablation as the command line names it (--ablate L.H[,L.H...], docs/heads.md): which
// attention heads a run replaces, parsed and checked against the model before it runs.
#ifndef ATTN_FORWARD_ABLATION_H_
#define ATTN_FORWARD_ABLATION_H_

#include <string>

#include "attn/model.h"
#include "attn/run_input.h"

namespace attn {

// Parses `text`: comma-separated heads, each "L.H" (layer L, head H of the model's one
// self-attention stack: a decoder-only model's decoder, an encoder-only model's encoder),
// "encoder.L.H" (the encoder's self-attention) or "decoder.L.H" (the decoder's masked
// self-attention). `mean`: --ablate-mean. Throws InputError("--ablate", ...) for a head the
// model does not have or a spec it cannot read, naming the range.
Ablation parse_ablation(const std::string& text, bool mean, const Model& model);

// "decoder.1.1 zeroed", "encoder.0.0, encoder.0.1 set to their mean over positions".
std::string ablation_label(const Ablation& ablation);

}  // namespace attn

#endif  // ATTN_FORWARD_ABLATION_H_
