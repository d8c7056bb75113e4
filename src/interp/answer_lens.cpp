// The answer after every layer (attn explain --lens --answer, TransformerLens's test_prompt):
// read from the logit lens's entries of a run.
#include <algorithm>

#include "attn/experiments.h"

namespace attn {

std::vector<LayerAnswer> answer_by_layer(const Trace& trace, std::size_t answer, std::size_t batch) {
  std::vector<LayerAnswer> out;
  for (const TraceEntry& e : trace.entries()) {
    if (e.id.kind != StepKind::LensProbabilities || e.id.gradient) continue;
    StepId logits_id = e.id;
    logits_id.kind = StepKind::LensLogits;
    const TraceEntry* logits = trace.find(logits_id);
    const Tensor& p = e.tensor;  // (B,T,V), or (T,V) unbatched
    const std::size_t V = p.shape.back(), T = p.shape[p.rank() - 2];
    const std::size_t B = p.size() / (T * V);
    if (!logits || answer >= V || batch >= B) continue;
    const std::size_t row = (batch * T + T - 1) * V;
    const double q = p.data[row + answer];
    LayerAnswer a;
    a.layer = e.id.number;
    a.probability = q;
    a.logit = logits->tensor.data[row + answer];
    // rank 1 for the most probable; ties with a smaller id rank before it, as a stable sort would
    a.rank = 1;
    for (std::size_t v = 0; v < V; ++v)
      if (p.data[row + v] > q || (p.data[row + v] == q && v < answer)) ++a.rank;
    out.push_back(a);
  }
  std::sort(out.begin(), out.end(), [](const LayerAnswer& x, const LayerAnswer& y) { return x.layer < y.layer; });
  return out;
}

}  // namespace attn
