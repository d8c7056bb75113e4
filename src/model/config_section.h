// The file's "model" section: the hyper-parameters everything else is checked against.
#ifndef ATTN_MODEL_CONFIG_SECTION_H_
#define ATTN_MODEL_CONFIG_SECTION_H_

#include <string>

#include "attn/model.h"
#include "model/json_reader.h"

namespace attn {

// The hyper-parameters at `path`, with the documented defaults filled in (d_head =
// d_model / num_heads, ReLU, post-norm, sinusoidal positions, ...). In collect mode a
// missing d_model or num_heads throws AlreadyReported (the reader recorded it).
ModelConfig read_config(const JsonReader& reader, const Json& value, const std::string& path);

}  // namespace attn

#endif  // ATTN_MODEL_CONFIG_SECTION_H_
