// The darts-clone double-array trie of SentencePiece's normalization tables (a .spm's
// precompiled_charsmap, and tokenizer.json's Precompiled normalizer, which carries the same
// bytes): 32-bit units packing a label, a leaf flag, a value and an offset to the children.
#ifndef ATTN_TOKENIZERS_DARTS_TRIE_H_
#define ATTN_TOKENIZERS_DARTS_TRIE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn {

struct DartsUnit {
  std::uint32_t bits;
  bool has_leaf() const { return ((bits >> 8) & 1) == 1; }
  std::uint32_t value() const { return bits & ((1U << 31) - 1); }
  std::uint32_t label() const { return bits & ((1U << 31) | 0xFF); }
  std::uint32_t offset() const { return (bits >> 10) << ((bits & (1U << 9)) >> 6); }
};

// A charsmap: a little-endian uint32 trie size in bytes, the trie's units, then the mapped
// strings (each ended by a NUL byte). False when the blob is too short for its trie, or its
// size is not whole units.
bool split_charsmap(const std::string& blob, std::vector<DartsUnit>& units, std::string& strings);

// What would make a common-prefix search read outside `units`, or a leaf's value point
// past `strings` (and, with `nul_ended`, a string run past the end), walking every node a
// search can reach; nullopt when nothing would.
std::optional<std::string> unsafe_darts_trie(const std::vector<DartsUnit>& units, const std::string& strings,
                                             bool nul_ended);

}  // namespace attn

#endif  // ATTN_TOKENIZERS_DARTS_TRIE_H_
