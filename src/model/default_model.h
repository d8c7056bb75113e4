// The model `attn explain` uses when no -c FILE is given: the trained translator,
// data/examples/trained_translate.json, compiled into the binary.
#ifndef ATTN_MODEL_DEFAULT_MODEL_H_
#define ATTN_MODEL_DEFAULT_MODEL_H_

#include <string>

namespace attn {

// The JSON text of data/examples/trained_translate.json.
const std::string& default_model_json();
// The name errors and the dump give it.
inline const char* kDefaultModelSource = "<default model>";

}  // namespace attn

#endif  // ATTN_MODEL_DEFAULT_MODEL_H_
