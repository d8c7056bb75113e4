// The small JSON files beside the weights (config.json, generation_config.json,
// model.safetensors.index.json), read with errors naming the file.
#ifndef ATTN_CHECKPOINT_JSON_FILE_H_
#define ATTN_CHECKPOINT_JSON_FILE_H_

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace attn {

using Json = nlohmann::json;

// The largest of these files attn reads: a config is a few KiB, the index of a model of
// 100 shards some hundreds of KiB.
constexpr std::uint64_t kMaxCheckpointJsonBytes = 64ULL << 20;

// Whether `text` nests arrays and objects deeper than `limit`, scanned before
// nlohmann-json parses it (a megabyte of '[' must not exhaust the stack).
bool nested_deeper_than(const std::string& text, std::size_t limit);

// The JSON object in the file at `path`: InputError naming it when it cannot be read, is
// larger than kMaxCheckpointJsonBytes, is not JSON or not an object.
Json read_json_object_file(const std::string& path);

// "an object", "the string \"x\"", "the number 4.5", ...: what a file wrote, for messages.
std::string describe_config_value(const Json& value);

}  // namespace attn

#endif  // ATTN_CHECKPOINT_JSON_FILE_H_
