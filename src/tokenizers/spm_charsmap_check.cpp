#include "tokenizers/spm_charsmap_check.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace attn {

namespace {

// Protobuf's wire format, as far as finding one length-delimited field needs.
bool read_varint(const std::string& data, std::size_t& pos, std::uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && pos < data.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(data[pos++]);
    value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// The payloads of every length-delimited field `number` of `message`, in order; stops at
// anything malformed (libsentencepiece's parser has accepted the whole already).
std::vector<std::string> fields(const std::string& message, std::uint64_t number) {
  std::vector<std::string> found;
  for (std::size_t pos = 0; pos < message.size();) {
    std::uint64_t key = 0, length = 0;
    if (!read_varint(message, pos, key)) break;
    const std::uint64_t wire_type = key & 7;
    if (wire_type == 0) {
      if (!read_varint(message, pos, length)) break;
    } else if (wire_type == 1 || wire_type == 5) {
      pos += wire_type == 1 ? 8 : 4;
    } else if (wire_type == 2) {
      if (!read_varint(message, pos, length) || length > message.size() - pos) break;
      if ((key >> 3) == number) found.push_back(message.substr(pos, length));
      pos += length;
    } else {
      break;
    }
  }
  return found;
}

// darts-clone's unit: label, has_leaf, value and offset packed in 32 bits.
struct Unit {
  std::uint32_t bits;
  bool has_leaf() const { return ((bits >> 8) & 1) == 1; }
  std::uint32_t value() const { return bits & ((1U << 31) - 1); }
  std::uint32_t label() const { return bits & ((1U << 31) | 0xFF); }
  std::uint32_t offset() const { return (bits >> 10) << ((bits & (1U << 9)) >> 6); }
};

// Walks every node commonPrefixSearch can reach from the root, as it reads them.
std::optional<std::string> check_trie(const std::vector<Unit>& units, const std::string& normalized) {
  const std::size_t count = units.size();
  if (count == 0) return "an empty trie";
  // Strings are read with strlen: the last one must end inside the table.
  if (normalized.empty() || normalized.back() != '\0') return "mapped strings that do not end in a NUL byte";
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
        if (units[leaf].value() >= normalized.size()) return "a mapped string past the table";
      }
      pending.push_back(child);
    }
  }
  return std::nullopt;
}

// normalizer.cc's DecodePrecompiledCharsMap: a little-endian uint32 trie size, the trie,
// then the mapped strings.
std::optional<std::string> check_charsmap(const std::string& blob) {
  std::uint32_t trie_bytes = 0;
  if (blob.size() <= sizeof trie_bytes) return std::nullopt;  // the library refuses it itself
  std::memcpy(&trie_bytes, blob.data(), sizeof trie_bytes);
  if (trie_bytes >= blob.size() - sizeof trie_bytes) return std::nullopt;  // likewise
  std::vector<Unit> units(trie_bytes / sizeof(std::uint32_t));
  std::memcpy(units.data(), blob.data() + sizeof trie_bytes, units.size() * sizeof(std::uint32_t));
  return check_trie(units, blob.substr(sizeof trie_bytes + trie_bytes));
}

}  // namespace

std::optional<std::string> unsafe_spm_charsmap(const std::string& model) {
  // ModelProto: normalizer_spec = 3, denormalizer_spec = 5; NormalizerSpec:
  // precompiled_charsmap = 2. A field given twice merges: the last charsmap is the one used.
  for (const std::uint64_t spec_field : {3u, 5u}) {
    std::string charsmap;
    for (const std::string& spec : fields(model, spec_field))
      for (const std::string& blob : fields(spec, 2)) charsmap = blob;
    if (charsmap.empty()) continue;
    if (auto problem = check_charsmap(charsmap))
      return (spec_field == 3 ? "normalizer_spec" : "denormalizer_spec") + std::string(".precompiled_charsmap: ") +
             *problem;
  }
  return std::nullopt;
}

}  // namespace attn
