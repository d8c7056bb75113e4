// The file's "input" section: what the encoder reads (X, text or tokens) and what the
// decoder reads (target_X, target_text or target_tokens).
#ifndef ATTN_MODEL_INPUT_SECTION_H_
#define ATTN_MODEL_INPUT_SECTION_H_

#include <string>

#include "attn/model.h"
#include "attn/run_input.h"
#include "model/json_reader.h"
#include "model/load_context.h"
#include "model/memory_estimate.h"

namespace attn {

// Reads the source and target input from `value` into `input`. Needs the model's config and
// vocab read. Text and tokens are checked as the run will look them up
// (check_token_input); the target must have the source's batch layout. An X is refused
// before it is drawn when it alone, or the run with `layers`, is over the memory limit.
void read_input(LoadContext& context, const Json& value, const std::string& path, const LayerCounts& layers,
                const Model& model, RunInput& input);

}  // namespace attn

#endif  // ATTN_MODEL_INPUT_SECTION_H_
