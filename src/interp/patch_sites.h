// Where a model's patch sites are, read from the tape of its own run (which block read what),
// and the activations a run keeps for them. Nothing here knows a model's family: a layer's
// resid_pre is whatever its first block read, its attn_out what its self-attention block
// made, its mlp_out its feed-forward's, its heads the self-attention's context.
#ifndef ATTN_INTERP_PATCH_SITES_H_
#define ATTN_INTERP_PATCH_SITES_H_

#include <optional>
#include <utility>
#include <vector>

#include "attn/experiments.h"
#include "attn/trace.h"

namespace attn {

// The entries of one layer that sites patch.
struct LayerSites {
  Stack stack = Stack::Decoder;
  int layer = 0;
  StepId resid_pre;  // the entry the layer's first block reads
  std::optional<StepId> attn_out, mlp_out, context;
};

// Every layer's, in the order the run made them (the encoder's before the decoder's).
std::vector<LayerSites> layer_sites(const std::vector<TapeEntry>& tape);

// The entry a site patches, or nullopt when its layer has no such block.
std::optional<StepId> site_entry(const std::vector<LayerSites>& layers, const Site& site);

// The activations a run keeps for the sites (with its B axis): the inputs, the layers'
// outputs, the attention and feed-forward outputs and the heads' contexts.
class KeptActivations {
 public:
  // Whether a record of this id is one to keep.
  static bool wanted(const StepId& id, std::size_t rank);
  void keep(const TraceRecord& record);
  // The kept entry of this id; InternalError when it was not kept.
  const Tensor& at(const StepId& id) const;
  // Layer `layer` of `stack`'s output.
  const Tensor& layer_output(Stack stack, int layer) const;
  std::size_t bytes() const;

 private:
  std::vector<std::pair<StepId, Tensor>> entries_;
};

}  // namespace attn

#endif  // ATTN_INTERP_PATCH_SITES_H_
