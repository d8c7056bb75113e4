// Refusing a run too big for the memory limit while the file loads, before anything large
// is drawn or allocated ("randn" of a huge X would take minutes). The estimate itself,
// estimate_run_bytes, is public (attn/model_file.h).
#ifndef ATTN_MODEL_MEMORY_ESTIMATE_H_
#define ATTN_MODEL_MEMORY_ESTIMATE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "attn/model.h"
#include "attn/model_file.h"
#include "model/load_context.h"

namespace attn {

// How many layers the run has: known from the layer lists before any layer is read.
struct LayerCounts {
  std::size_t encoder = 0, decoder = 0;
};

// The most trace entries any attention block of `model` records because of the optional
// weights it has that no model flag switches on (attn/block_weights.def's step column): 3
// for a block with b_q, b_k and b_v (q_biased, k_biased, v_biased), 0 without biases.
std::size_t block_weight_steps(const Model& model);

// estimate_run_bytes (attn/model_file.h) with `weight_steps` more entries of about (B,S,H*d)
// in every attention block: those of block_weight_steps, once the weights are read (the
// loaded model's check, training). estimate_run_bytes(config, size) counts none.
std::uint64_t estimate_run_bytes(const ModelConfig& config, const RunSize& size, std::size_t weight_steps);

// The limit in force: --max-memory, else half the machine's memory.
std::uint64_t memory_limit(const LoadOptions& options);

// InputError at `path` when an input X of `elements` float64 numbers alone is over the limit.
void check_input_memory(LoadContext& context, std::size_t elements, const std::string& path);

// InputError at `path` when the forward of a run of `size` (its trace kept when the options
// keep it) is estimated to need more than the limit: what grad, --lens and --ablate add is
// the loaded model's own estimate (attn/run_memory.h).
void check_run_size(LoadContext& context, const ModelConfig& config, RunSize size, const std::string& path);

// InputError at `path` when the weights of `size` (with one token of input) are over the
// limit: checked from the declared sizes before anything is drawn.
void check_weights_size(LoadContext& context, const ModelConfig& config, RunSize size, const std::string& path);

// InputError at `path` when a run of these sizes is estimated to need more than the limit.
// Uses the model's hyper-parameters and vocabulary, which are read before the input.
void check_run_memory(LoadContext& context, const Model& model, std::size_t batch, std::size_t seq_len,
                      std::size_t target_len, const LayerCounts& layers, const std::string& path);

// check_run_memory for the model's run on `input`, reported at "input": X gives the sizes;
// text and tokens are bounded by their longest sentence (at most one token per character).
void check_memory_for_input(LoadContext& context, const Model& model, const RunInput& input, const LayerCounts& layers);

}  // namespace attn

#endif  // ATTN_MODEL_MEMORY_ESTIMATE_H_
