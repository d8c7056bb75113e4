#include "interp/patch_sites.h"

#include <algorithm>

#include "attn/error.h"
#include "attn/step_roles.h"

namespace attn {

std::vector<LayerSites> layer_sites(const std::vector<TapeEntry>& tape) {
  std::vector<LayerSites> layers;
  for (const TapeEntry& e : tape) {
    if (!e.result.in_layer()) continue;
    auto it = std::find_if(layers.begin(), layers.end(),
                           [&](const LayerSites& l) { return l.stack == e.result.stack && l.layer == e.result.layer; });
    if (it == layers.end()) {  // the layer's first block: what it reads is the layer's input
      layers.push_back({e.result.stack, e.result.layer, e.x, {}, {}, {}});
      it = layers.end() - 1;
    }
    if (e.op == TapeOp::Attention && e.result.block != Block::CrossAttention && !it->attn_out) {
      it->attn_out = e.result;
      it->context = heads_context_of(e.result);
    }
    if (e.op == TapeOp::FeedForward && !it->mlp_out) it->mlp_out = e.result;
  }
  return layers;
}

std::optional<StepId> site_entry(const std::vector<LayerSites>& layers, const Site& site) {
  for (const LayerSites& l : layers) {
    if (l.stack != site.stack || l.layer != site.layer) continue;
    switch (site.kind) {
      case SiteKind::ResidPre:
        return l.resid_pre;
      case SiteKind::AttnOut:
        return l.attn_out;
      case SiteKind::MlpOut:
        return l.mlp_out;
      case SiteKind::Head:
        return l.context;
    }
  }
  return std::nullopt;
}

bool KeptActivations::wanted(const StepId& id, std::size_t rank) {
  if (id.gradient) return false;
  if (!id.in_layer()) return rank == 3 && !is_model_output(id.kind);
  return is_block_result(id.kind) || is_heads_context(id.kind);
}

void KeptActivations::keep(const TraceRecord& record) {
  Tensor t = Tensor::uninitialized(record.shape, record.axes);
  std::copy(record.data, record.data + t.size(), t.data.begin());
  for (auto& [id, tensor] : entries_)
    if (id == record.id) {
      tensor = std::move(t);
      return;
    }
  entries_.emplace_back(record.id, std::move(t));
}

const Tensor& KeptActivations::at(const StepId& id) const {
  for (const auto& [kept, tensor] : entries_)
    if (kept == id) return tensor;
  throw InternalError("attn patch: the entry " + trace_name(id) + " was not kept");
}

const Tensor& KeptActivations::layer_output(Stack stack, int layer) const {
  for (const auto& [id, tensor] : entries_)
    if (is_layer_output(id.kind) && id.stack == stack && id.layer == layer) return tensor;
  throw InternalError("attn patch: no output of layer " + std::to_string(layer) + " was kept");
}

std::size_t KeptActivations::bytes() const {
  std::size_t n = 0;
  for (const auto& [id, tensor] : entries_) n += tensor.size() * sizeof(double);
  return n;
}

}  // namespace attn
