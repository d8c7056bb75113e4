// Duplicate keys in a JSON text: nlohmann's document parser keeps the last value of a key
// named twice, silently. Every JSON file attn reads (a model file, config.json, the index)
// is checked by this one pass first.
#ifndef ATTN_CORE_JSON_DUPLICATE_KEYS_H_
#define ATTN_CORE_JSON_DUPLICATE_KEYS_H_

#include <string>

namespace attn {

// InputError(file, the JSON path of the object, "duplicate key \"k\": a JSON object names each
// key once") for the first key an object names twice. A syntax error is left for the
// document parser to report, with its message.
void refuse_duplicate_keys(const std::string& text, const std::string& file);

}  // namespace attn

#endif  // ATTN_CORE_JSON_DUPLICATE_KEYS_H_
