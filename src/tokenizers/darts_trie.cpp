#include "tokenizers/darts_trie.h"

#include <cstring>

namespace attn {

bool split_charsmap(const std::string& blob, std::vector<DartsUnit>& units, std::string& strings) {
  std::uint32_t trie_bytes = 0;
  if (blob.size() < sizeof trie_bytes) return false;
  std::memcpy(&trie_bytes, blob.data(), sizeof trie_bytes);
  // A size that is not whole units is read differently by sentencepiece (the strings start
  // after it) and tokenizers (after the last whole unit): no real table has one.
  if (trie_bytes % sizeof(std::uint32_t) != 0 || trie_bytes > blob.size() - sizeof trie_bytes) return false;
  const std::size_t count = trie_bytes / sizeof(std::uint32_t);
  units.resize(count);
  std::memcpy(units.data(), blob.data() + sizeof trie_bytes, count * sizeof(std::uint32_t));
  strings = blob.substr(sizeof trie_bytes + trie_bytes);
  return true;
}

std::optional<std::string> unsafe_darts_trie(const std::vector<DartsUnit>& units, const std::string& strings,
                                             bool nul_ended) {
  const std::size_t count = units.size();
  if (count == 0) return "an empty trie";
  // Strings are read up to their NUL byte: the last one must end inside the table.
  if (nul_ended && (strings.empty() || strings.back() != '\0')) return "mapped strings that do not end in a NUL byte";
  std::vector<bool> seen(count, false);
  std::vector<std::size_t> pending{0};
  seen[0] = true;
  while (!pending.empty()) {
    const std::size_t node = pending.back();
    pending.pop_back();
    // The next byte c is looked up at base ^ c, for any c the text may hold.
    const std::size_t base = node ^ units[node].offset();
    if ((base | 0xFF) >= count) return "a trie node whose children lie past the trie";
    for (std::uint32_t c = 0; c < 256; ++c) {
      const std::size_t child = base ^ c;
      if (units[child].label() != c || seen[child]) continue;
      seen[child] = true;
      if (units[child].has_leaf()) {
        const std::size_t leaf = child ^ units[child].offset();
        if (leaf >= count) return "a trie leaf past the trie";
        const std::size_t value = units[leaf].value();
        if (value >= strings.size() + (nul_ended ? 0 : 1)) return "a mapped string past the table";
        // tokenizers slices its (UTF-8) strings there: a cut inside a character would panic.
        if (!nul_ended && value < strings.size() && (static_cast<unsigned char>(strings[value]) & 0xC0) == 0x80)
          return "a mapped string starting inside a character";
      }
      pending.push_back(child);
    }
  }
  return std::nullopt;
}

}  // namespace attn
