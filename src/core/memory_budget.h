// The run's memory limit (--max-memory, else half the machine's memory) for what is read
// before a model's own estimate can be made: the JSON of the side files (config.json, the
// shards' index, tokenizer.json, vocab.json, each safetensors header) and the text a
// tokenizer grows through its normalizers and pre-tokenizers. Each is counted before it is
// parsed or grown, so that a 20 MiB tokenizer.json is refused under --max-memory 0.01
// instead of taking 605 MiB.
#ifndef ATTN_CORE_MEMORY_BUDGET_H_
#define ATTN_CORE_MEMORY_BUDGET_H_

#include <cstdint>
#include <string>

namespace attn {

// What parsing one byte of JSON text can take with nlohmann::json, the text itself
// included: measured with /usr/bin/time -v on 20 MiB documents (peak resident set over
// the text's bytes): 18.2 for [0,0,...], 28.8 for ["","",...], 23.5 for [[],[],...], 12.7
// for {"0":0,"1":0,...}, 34.2 for [{},{},...] and [{"":{}},...], the worst (every 3 bytes
// an object of its own: a 16-byte value in its array and a 48-byte map node). Rounded up
// for the allocator's slack.
constexpr std::uint64_t kJsonBytesPerTextByte = 40;

// Starts counting a load: the limit the counts below are held to (0: half the machine's
// memory), nothing counted yet. Each load of a model or tokenizer calls it (the tests load
// many in one process).
void set_memory_limit(std::uint64_t bytes);
std::uint64_t memory_limit_in_force();

// Counts parsing `text_bytes` of JSON read from `path` (`what`: "the header", "" for the
// whole file), together with the other side files counted before: InputError(path, field,
// "parsing ... would take about X ..., more than the limit of Y; ...") when that passes the
// limit. A file counted already (another name linking to it, by device and inode) is not
// counted again.
void count_json_parse(const std::string& path, const std::string& field, std::uint64_t text_bytes);

// "1.4 GiB": memory as the refusals write it.
std::string memory_text(long double bytes);

}  // namespace attn

#endif  // ATTN_CORE_MEMORY_BUDGET_H_
