// The KV cache: a decoder run one new token at a time. The prompt's full run fills the cache
// as its attention blocks compute each decoder layer's keys and values; each step then runs
// the model's own forward program (forward/program.h) over the new position's row alone,
// its attention reading the earlier keys and values from the cache, so a step costs one
// row's work, not the whole prefix's.

#include <fmt/format.h>

#include "attn/error.h"
#include "attn/generate.h"
#include "attn/step_roles.h"
#include "forward/program.h"

namespace attn {

KvCacheDecoder::KvCacheDecoder(const Model& model, Ablation ablation)
    : model_(model), ablation_(std::move(ablation)), caches_(model.decoder.size()) {
  if (ablation_.mean && !ablation_.empty())
    throw InputError("--ablate-mean", "",
                     "generation runs one new position at a time with the KV cache, and a head's mean over the "
                     "positions changes with every new one: zero the heads instead (--ablate alone)");
  if (!model.output.present)
    throw InputError(model.source, "output",
                     "this model has no output head, so it cannot choose a next token (generate needs one)");
  if (!model.has_decoder())
    throw InputError(model.source, "decoder",
                     "this model has no decoder to generate with: give a decoder-only model "
                     "(model.architecture \"decoder-only\") or an encoder-decoder");
}

namespace {

// Keeps the last row (V,) of every output.logits the trace records: the next token's logits.
void keep_last_logits(Trace& trace, Sequence sequence, std::vector<double>& logits) {
  trace.add_hook(output_logits_id(sequence), [&logits](const StepId&, Tensor& value) {
    const std::size_t V = value.shape.back();
    logits.assign(value.data.end() - static_cast<std::ptrdiff_t>(V), value.data.end());
  });
}

}  // namespace

Tensor KvCacheDecoder::prefill(const RunInput& input, Trace& trace) {
  for (LayerCache& cache : caches_) cache = LayerCache();
  keep_last_logits(trace, model_.decoder_only() ? Sequence::Source : Sequence::Target, logits_);
  RunContext context;
  context.ablation = &ablation_;
  context.cache = &caches_;
  Tensor p = run_program(model_, input, trace, context);
  source_len_ = caches_.empty() ? 0 : caches_[0].cross_k.length();
  return p;
}

std::size_t KvCacheDecoder::length() const { return caches_.empty() ? 0 : caches_[0].k.length(); }

StepCost KvCacheDecoder::cost_at(std::size_t position) const {
  // Per layer, one row: Q and W_o (2·N·Hd), K and V (2·N·Gd, G key/value heads), scores and
  // context against the L' keys it sees (2·H·d·L', L' = min(L, W) with a sliding window), the
  // feed-forward (2·N·F; 3·N·F for SwiGLU's gate, up and down); cross-attention: Q and W_o,
  // and 2·H·d·S. The head: N·V. Without the cache the whole prefix of L = position + 1 rows
  // runs again, every score of the L x L matrices (a window masks them, it does not skip
  // them), and the cross-attention's keys and values of the source.
  const ModelConfig c = model_.config.decoder_config();  // the decoder's heads
  const std::uint64_t N = c.d_model, Hd = c.num_heads * c.d_head, Gd = c.kv_heads() * c.d_head, F = c.d_ff;
  const std::uint64_t V = model_.vocab.size(), ffn = gated(c.activation) ? 3 : 2;
  const std::uint64_t L = position + 1, S = source_len_, layers = model_.decoder.size();
  std::uint64_t seen = 0;  // the keys each layer's row sees, over the layers
  for (std::uint64_t l = 0; l < layers; ++l) {
    const std::uint64_t window = c.window_of(static_cast<int>(l));
    seen += window ? std::min<std::uint64_t>(L, window) : L;
  }
  const bool cross = model_.has_target();
  StepCost cost;
  const std::uint64_t row = 2 * N * Hd + 2 * N * Gd + ffn * N * F + (cross ? 2 * N * Hd + 2 * Hd * S : 0);
  cost.with_cache = layers * row + 2 * Hd * seen + N * V;
  cost.without_cache = layers * (L * row + 2 * Hd * L * L + (cross ? 2 * S * N * Hd : 0)) + L * N * V;
  return cost;
}

const std::vector<double>& KvCacheDecoder::step(std::size_t token, Trace& trace) {
  const ModelConfig& config = model_.config;
  const std::size_t position = length();
  if (reads_position_table(config.positional_encoding) && position >= config.max_len)
    throw InputError(
        model_.source, "model.max_len",
        fmt::format("the learned position table has {} rows: no position {} to generate at", config.max_len, position));
  RunContext context;
  context.ablation = &ablation_;
  context.cache = &caches_;
  context.step = true;
  context.position = position;
  // the model's own forward program over the one new row: (1,1,N) -> (1,1,V), each attention
  // reading the cache
  keep_last_logits(trace, model_.decoder_only() ? Sequence::Source : Sequence::Target, logits_);
  Program run(model_, token, trace, context);
  run_forward(model_, run);
  cost_ = cost_at(position);
  return logits_;
}

}  // namespace attn
