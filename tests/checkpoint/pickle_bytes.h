// Pickles written opcode by opcode for the tests, as Lib/pickletools.py documents each
// opcode's argument: so a test can write what torch.save writes, and every hostile
// variant of it.
#ifndef ATTN_TESTS_CHECKPOINT_PICKLE_BYTES_H_
#define ATTN_TESTS_CHECKPOINT_PICKLE_BYTES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace attn_test {

inline std::string le_bytes(std::uint64_t v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

inline std::string op(unsigned char code) { return std::string(1, static_cast<char>(code)); }
inline std::string proto(int p = 2) { return op(0x80) + op(static_cast<unsigned char>(p)); }
inline std::string stop() { return "."; }
inline std::string mark() { return "("; }
inline std::string unicode(const std::string& s) { return "X" + le_bytes(s.size(), 4) + s; }
inline std::string short_unicode(const std::string& s) { return op(0x8c) + le_bytes(s.size(), 1) + s; }
inline std::string global(const std::string& module, const std::string& name) {
  return "c" + module + "\n" + name + "\n";
}
// An integer as torch.save's pickler writes it: BININT1, BININT2 or BININT.
inline std::string integer(std::int64_t v) {
  if (v >= 0 && v < 256) return "K" + le_bytes(static_cast<std::uint64_t>(v), 1);
  if (v >= 0 && v < 65536) return "M" + le_bytes(static_cast<std::uint64_t>(v), 2);
  return "J" + le_bytes(static_cast<std::uint64_t>(v), 4);
}
inline std::string long1(std::int64_t v) { return op(0x8a) + op(8) + le_bytes(static_cast<std::uint64_t>(v), 8); }
inline std::string put(int i) { return "q" + le_bytes(static_cast<std::uint64_t>(i), 1); }
inline std::string get(int i) { return "h" + le_bytes(static_cast<std::uint64_t>(i), 1); }
inline std::string tuple_of(const std::vector<std::string>& items) {
  std::string out = mark();
  for (const auto& i : items) out += i;
  return out + "t";
}
inline std::string ordered_dict() { return global("collections", "OrderedDict") + ")R"; }

// The persistent id of the zip format: ('storage', torch.TYPE, KEY, 'cpu', NUMEL), BINPERSID.
inline std::string storage(const std::string& type, const std::string& key, std::int64_t numel) {
  return tuple_of({unicode("storage"), global("torch", type), unicode(key), unicode("cpu"), integer(numel)}) + "Q";
}
inline std::string ints(const std::vector<std::int64_t>& v) {
  std::vector<std::string> items;
  for (auto x : v) items.push_back(integer(x));
  return tuple_of(items);
}
// _rebuild_tensor_v2(storage, offset, shape, stride, False, OrderedDict()), REDUCE.
inline std::string tensor(const std::string& storage_bytes, std::int64_t offset, const std::vector<std::int64_t>& shape,
                          const std::vector<std::int64_t>& stride) {
  return global("torch._utils", "_rebuild_tensor_v2") +
         tuple_of({storage_bytes, integer(offset), ints(shape), ints(stride), op(0x89), ordered_dict()}) + "R";
}
// A state dict pickle: OrderedDict() then SETITEMS of (name, value) pairs, STOP.
inline std::string state_dict(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string out = proto() + ordered_dict() + mark();
  for (const auto& [k, v] : items) out += unicode(k) + v;
  return out + "u" + stop();
}

// The legacy format's persistent id: the zip format's and a view's metadata, None.
inline std::string legacy_storage(const std::string& type, const std::string& key, std::int64_t numel) {
  return tuple_of({unicode("storage"), global("torch", type), unicode(key), unicode("cpu"), integer(numel), "N"}) + "Q";
}

// A whole legacy-format file: the magic number, the protocol version, sys_info, the state
// dict's pickle (made with legacy_storage), the storage keys, then each storage's element
// count and bytes, as torch/serialization.py's _legacy_save writes them.
inline std::string legacy_file(const std::string& state_dict_pickle,
                               const std::vector<std::pair<std::string, std::string>>& storages,
                               std::size_t element_bytes = 4) {
  std::string out = proto() + std::string("\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 12) + stop();
  out += proto() + "M" + le_bytes(1001, 2) + stop();
  out += proto() + "}" + mark() + unicode("little_endian") + op(0x88) + "u" + stop();
  out += state_dict_pickle;
  std::vector<std::string> keys;
  for (const auto& s : storages) keys.push_back(unicode(s.first));
  out += proto() + "]" + mark();
  for (const auto& k : keys) out += k;
  out += "e" + stop();
  for (const auto& [key, bytes] : storages) out += le_bytes(bytes.size() / element_bytes, 8) + bytes;
  return out;
}

}  // namespace attn_test

#endif  // ATTN_TESTS_CHECKPOINT_PICKLE_BYTES_H_
