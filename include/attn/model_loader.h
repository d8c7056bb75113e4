// Loads a model file (docs/model-file.md) into a Model: checks every field, draws "randn"
// values in the documented order, and refuses runs too big for the memory limit.
#ifndef ATTN_MODEL_LOADER_H_
#define ATTN_MODEL_LOADER_H_

#include <cstdint>
#include <string>

#include "attn/json_reader.h"
#include "attn/model.h"

namespace attn {

struct LoadOptions {
  // Refuse a run whose estimated memory exceeds this (0: half the machine's memory).
  std::uint64_t max_memory_bytes = 0;
};

Model load_model_file(const std::string& path, const LoadOptions& options = {});
// `source` names the document in error messages ("model.json", "<default model>").
Model load_model_text(const std::string& text, const std::string& source, const LoadOptions& options = {});
Model load_model_json(const Json& document, const std::string& source, const LoadOptions& options = {});

// The memory a run of `model` is estimated to need, in bytes (weights plus every
// intermediate the trace keeps).
std::uint64_t estimate_run_bytes(const ModelConfig& config, std::size_t batch, std::size_t seq_len,
                                 std::size_t num_layers);
// Half the physical memory: the default limit.
std::uint64_t default_memory_limit();

}  // namespace attn

#endif  // ATTN_MODEL_LOADER_H_
