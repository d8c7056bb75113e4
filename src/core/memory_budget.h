// The run's memory limit (--max-memory, else half the machine's memory) for what is read
// before a model's own estimate can be made: the JSON of the side files (config.json, the
// shards' index, tokenizer.json, vocab.json, each safetensors header) and the text a
// tokenizer grows through its normalizers and pre-tokenizers. Each is counted before it is
// parsed or grown, so that a 20 MiB tokenizer.json is refused under --max-memory 0.01
// instead of taking 605 MiB.
#ifndef ATTN_CORE_MEMORY_BUDGET_H_
#define ATTN_CORE_MEMORY_BUDGET_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn {

// What nlohmann::json's document of `text` can take at most, the text included, counted
// from the text's structure in one pass before it is parsed (bytes, as malloc hands them
// out on 64-bit glibc): every value a 16-byte slot in its array, which may hold up to twice
// its size while it grows and three times while it moves: 48; every object member a map
// node (the key's std::string, the value's slot, the tree's links): 96; every object a map
// header and every array a vector header on the heap: 64 and 32; every string value a
// std::string on the heap: 48; a string past the 15 bytes a std::string keeps inline, its
// bytes and their block: length + 32; and the lexer's copy of the longest string. Held to
// measured peaks (heap_peak.cpp) on documents of nothing but each kind of value in
// tests/core/memory_budget_test.cpp; the worst kind, [{},{},...], takes 37 bytes a byte.
std::uint64_t json_document_bound(const char* text, std::size_t size);

// Starts counting a load: the limit the counts below are held to (0: half the machine's
// memory), nothing counted yet. Each load of a model or tokenizer calls it (the tests load
// many in one process).
void set_memory_limit(std::uint64_t bytes);
std::uint64_t memory_limit_in_force();

// Counts parsing `size` bytes of JSON `text` read from `path` (`field`: "header", "" for
// the whole file), json_document_bound of it, together with the other side files counted
// before: InputError(path, field, "parsing ... could take about X ..., more than the limit
// of Y; ...") when that passes the limit. A file counted already (another name linking to
// it, by device and inode) is not counted again.
void count_json_parse(const std::string& path, const std::string& field, const char* text, std::size_t size);
// Before a file of `size` bytes of JSON is read: InputError as above when its text alone
// would pass the limit (a document takes its text and more). Counts nothing.
void check_json_text_fits(const std::string& path, const std::string& field, std::uint64_t size);

// What malloc hands out for a request of `bytes` in attn's process on 64-bit glibc, as
// heap_peak.cpp measures it (the block's usable size): the request and the 8 bytes of its
// header rounded up to 16, less the header; a block of 32 (24 usable) at least; nothing for
// nothing. Never a block mapped on its own and rounded to pages: cli/main.cpp turns that
// off (mallopt M_MMAP_MAX 0), so the heap reuses freed memory.
long double heap_block_bytes(long double bytes);
// What a std::string's characters take from malloc: nothing while they fit the 15 bytes
// libstdc++ keeps inside the string, else a block of them and their NUL.
long double string_heap_bytes(const std::string& text);

// "1.4 GiB": memory as the refusals write it.
std::string memory_text(long double bytes);

}  // namespace attn

#endif  // ATTN_CORE_MEMORY_BUDGET_H_
