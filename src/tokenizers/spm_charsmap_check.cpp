#include "tokenizers/spm_charsmap_check.h"

#include <cstdint>
#include <vector>

#include "tokenizers/darts_trie.h"

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

// normalizer.cc's DecodePrecompiledCharsMap splits the blob as split_charsmap does; a blob
// that does not split is refused here too, whatever the library would make of it.
std::optional<std::string> check_charsmap(const std::string& blob) {
  std::vector<DartsUnit> units;
  std::string strings;
  if (!split_charsmap(blob, units, strings)) return "a trie longer than the table";
  return unsafe_darts_trie(units, strings, true);
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
