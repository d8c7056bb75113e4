#include "checkpoint/pytorch_bin.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

#include <fmt/format.h>

#include "attn/error.h"
#include "checkpoint/pickle_reader.h"
#include "checkpoint/torch_zip.h"
#include "core/memory_budget.h"

namespace attn {

namespace {

// Where a storage's bytes lie in the file, once the format has found them.
struct StorageBytes {
  bool present = false;
  std::uint64_t begin = 0, size = 0;
};

std::string dims_text(const std::vector<std::int64_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

// The strides of `shape` in C order, as torch gives a contiguous tensor.
std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t step = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= std::max<std::int64_t>(shape[i], 1);
  }
  return strides;
}

// The number of elements `shape` holds, refused when a dimension is negative or the product
// overflows 2^63.
std::uint64_t shape_elements(const std::vector<std::int64_t>& shape, const std::string& file, const std::string& name) {
  std::uint64_t elements = 1;
  bool overflow = false;
  for (const std::int64_t d : shape) {
    if (d < 0) throw InputError(file, name, fmt::format("shape {} has a negative dimension", dims_text(shape)));
    const auto u = static_cast<std::uint64_t>(d);
    if (u != 0 && elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / u) overflow = true;
    elements *= u;
  }
  for (const std::int64_t d : shape)
    if (d == 0) return 0;
  if (overflow) throw InputError(file, name, fmt::format("shape {} holds more than 2^63 elements", dims_text(shape)));
  return elements;
}

StoredTensor stored_tensor(const PickleMachine& m, const PickledTensor& t, const std::vector<StorageBytes>& where,
                           const std::string& file, const std::string& name) {
  const PickledStorage& s = m.storages()[t.storage];
  const StorageBytes& b = where[t.storage];
  const std::uint64_t width = s.type->element_bytes;
  if (!b.present) throw InputError(file, name, fmt::format("its storage \"{}\" is not in the file", s.key));
  if (s.numel > b.size / width || s.numel * width != b.size)
    throw InputError(file, name,
                     fmt::format("its storage \"{}\" holds {} bytes, but its persistent id says {} elements of {} ({} "
                                 "bytes each)",
                                 s.key, b.size, s.numel, s.type->name, width));
  const std::uint64_t elements = shape_elements(t.shape, file, name);
  if (elements > 0 && t.stride != contiguous_strides(t.shape)) {
    for (std::size_t i = 0; i < t.shape.size(); ++i)
      if (t.shape[i] != 1 && t.stride[i] != contiguous_strides(t.shape)[i])
        throw InputError(file, name,
                         fmt::format("strides {} are not those of shape {} in C order ({}): attn reads contiguous "
                                     "tensors only",
                                     dims_text(t.stride), dims_text(t.shape), dims_text(contiguous_strides(t.shape))));
  }
  if (t.offset < 0 || static_cast<std::uint64_t>(t.offset) > s.numel || elements > s.numel - t.offset)
    throw InputError(file, name,
                     fmt::format("shape {} from element {} goes past the end of its storage \"{}\" ({} elements)",
                                 dims_text(t.shape), t.offset, s.key, s.numel));
  StoredTensor out;
  out.name = name;
  out.dtype = s.type->dtype;
  out.dtype_name = s.type->dtype_name;
  for (const std::int64_t d : t.shape) out.shape.push_back(static_cast<std::size_t>(d));
  out.begin = b.begin + static_cast<std::uint64_t>(t.offset) * width;
  out.end = out.begin + elements * width;
  return out;
}

// The state dict's tensors, in its order: a dict of names to tensors and nothing else.
std::vector<StoredTensor> state_dict_tensors(const PickleMachine& m, std::uint32_t root,
                                             const std::vector<StorageBytes>& where, const std::string& file,
                                             const std::string& pickle) {
  const PickleValue& dict = m.value(root);
  if (dict.kind != PickleKind::Dict)
    throw InputError(file, pickle, fmt::format("expected a state dict (names to tensors), found {}", m.describe(root)));
  std::vector<StoredTensor> tensors;
  std::unordered_set<std::string> names;
  for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PickleValue& key = m.value(dict.items[i]);
    if (key.kind != PickleKind::String)
      throw InputError(
          file, pickle,
          fmt::format("the state dict's key {} is {}, expected a tensor's name", i / 2, m.describe(dict.items[i])));
    const std::string name(key.text);
    if (!names.insert(name).second) throw InputError(file, name, "the state dict names this tensor twice");
    const PickleValue& value = m.value(dict.items[i + 1]);
    if (value.kind != PickleKind::Tensor)
      throw InputError(file, name, fmt::format("expected a tensor, found {}", m.describe(dict.items[i + 1])));
    tensors.push_back(stored_tensor(m, m.tensors()[static_cast<std::size_t>(value.integer)], where, file, name));
  }
  return tensors;
}

// What the archive's directory holds while the pickle is read: the entries, their names, and
// the index of them by name.
std::uint64_t zip_index_bytes(const std::vector<ZipEntry>& entries) {
  long double bytes = heap_block_bytes(static_cast<long double>(entries.capacity() * sizeof(ZipEntry))) +
                      heap_block_bytes(static_cast<long double>(2 * entries.size() * sizeof(void*)));
  for (const ZipEntry& e : entries) bytes += string_heap_bytes(e.name) + heap_block_bytes(48);
  return static_cast<std::uint64_t>(bytes);
}

std::vector<StoredTensor> parse_zip(const std::uint8_t* bytes, std::uint64_t size, const std::string& file,
                                    std::uint64_t* reading_bytes) {
  const std::vector<ZipEntry> entries = read_zip_entries(bytes, size, file);
  if (entries.empty()) throw InputError(file, "", "the zip archive holds no entries, expected ARCHIVE/data.pkl");
  const std::string& first = entries.front().name;
  const std::size_t slash = first.find('/');
  if (slash == std::string::npos)
    throw InputError(file, first, "expected every entry inside the archive's folder (\"archive/data.pkl\")");
  const std::string prefix = first.substr(0, slash + 1);
  const auto find = [&](const std::string& name) -> const ZipEntry* {
    for (const auto& e : entries)
      if (e.name == name) return &e;
    return nullptr;
  };
  const ZipEntry* byteorder = find(prefix + "byteorder");
  if (byteorder) {
    const std::string order(reinterpret_cast<const char*>(bytes + byteorder->begin),
                            std::min<std::uint64_t>(byteorder->size, 16));
    if (order != "little")
      throw InputError(file, byteorder->name,
                       fmt::format("expected \"little\", found \"{}\": attn reads little-endian storages", order));
  }
  const ZipEntry* pickle = find(prefix + "data.pkl");
  if (!pickle) throw InputError(file, prefix + "data.pkl", "missing: the state dict's pickle");
  if (pickle->size > kMaxStateDictPickleBytes)
    throw InputError(
        file, pickle->name,
        fmt::format("{} bytes, more than the {} MiB attn reads", pickle->size, kMaxStateDictPickleBytes >> 20));
  PickleMachine machine(file, pickle->name, PersistentIds::Zip);
  const std::uint32_t root = machine.run(bytes + pickle->begin, pickle->size);
  std::unordered_map<std::string, const ZipEntry*> by_name;
  for (const auto& e : entries) by_name.emplace(e.name, &e);
  if (reading_bytes) *reading_bytes = machine.held_bytes() + zip_index_bytes(entries);
  std::vector<StorageBytes> where(machine.storages().size());
  for (std::size_t i = 0; i < where.size(); ++i) {
    const auto it = by_name.find(prefix + "data/" + machine.storages()[i].key);
    if (it != by_name.end()) where[i] = {true, it->second->begin, it->second->size};
  }
  return state_dict_tensors(machine, root, where, file, pickle->name);
}

// The legacy format's magic number, 0x1950a86a20f9469cfc6c, as LONG1 writes it (little-endian).
constexpr std::uint8_t kLegacyMagic[] = {0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
constexpr std::int64_t kLegacyProtocolVersion = 1001;

// One of the small pickles before the state dict: its value, and `at` moved past it.
struct SmallPickle {
  PickleMachine machine;
  std::uint32_t root = 0;
  SmallPickle(const std::uint8_t* bytes, std::uint64_t size, std::uint64_t& at, const std::string& file,
              const std::string& name, PersistentIds ids = PersistentIds::None)
      : machine(file, name, ids) {
    std::size_t length = 0;
    root = machine.run(bytes + at, std::min<std::uint64_t>(size - at, kMaxStateDictPickleBytes), &length);
    at += length;
  }
  const PickleValue& value() const { return machine.value(root); }
};

void check_legacy_header(const std::uint8_t* bytes, std::uint64_t size, std::uint64_t& at, const std::string& file) {
  const SmallPickle magic(bytes, size, at, file, "the magic number's pickle");
  if (magic.value().kind != PickleKind::BigInt || magic.value().text.size() != sizeof kLegacyMagic ||
      !std::equal(kLegacyMagic, kLegacyMagic + sizeof kLegacyMagic,
                  reinterpret_cast<const std::uint8_t*>(magic.value().text.data())))
    throw InputError(file, "the magic number's pickle",
                     fmt::format("expected torch's magic number 0x1950a86a20f9469cfc6c, found {}",
                                 magic.machine.describe(magic.root)));
  const SmallPickle version(bytes, size, at, file, "the protocol version's pickle");
  if (version.value().kind != PickleKind::Int || version.value().integer != kLegacyProtocolVersion)
    throw InputError(file, "the protocol version's pickle",
                     fmt::format("expected 1001, found {}", version.machine.describe(version.root)));
  const SmallPickle info(bytes, size, at, file, "the sys_info pickle");
  if (info.value().kind != PickleKind::Dict)
    throw InputError(file, "the sys_info pickle",
                     fmt::format("expected a dict, found {}", info.machine.describe(info.root)));
  const auto& items = info.value().items;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const PickleValue& key = info.machine.value(items[i]);
    const PickleValue& value = info.machine.value(items[i + 1]);
    if (key.kind == PickleKind::String && key.text == "little_endian" &&
        !(value.kind == PickleKind::Bool && value.integer == 1))
      throw InputError(file, "the sys_info pickle",
                       fmt::format("little_endian is {}: attn reads storages a little-endian machine wrote",
                                   info.machine.describe(items[i + 1])));
  }
}

// Where each listed storage lies: an 8-byte element count, then its bytes, in the order of
// the keys' list.
std::vector<StorageBytes> legacy_storages(const std::uint8_t* bytes, std::uint64_t size, std::uint64_t& at,
                                          const PickleMachine& state, const SmallPickle& keys,
                                          const std::string& file) {
  const char* list_name = "the storage keys' pickle";
  if (keys.value().kind != PickleKind::List)
    throw InputError(file, list_name, fmt::format("expected a list, found {}", keys.machine.describe(keys.root)));
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < state.storages().size(); ++i) index.emplace(state.storages()[i].key, i);
  std::vector<StorageBytes> where(state.storages().size());
  for (const std::uint32_t item : keys.value().items) {
    const PickleValue& key = keys.machine.value(item);
    if (key.kind != PickleKind::String)
      throw InputError(file, list_name, fmt::format("expected storage keys, found {}", keys.machine.describe(item)));
    const std::string name = fmt::format("storage \"{}\"", std::string(key.text));
    const auto it = index.find(std::string(key.text));
    if (it == index.end()) throw InputError(file, name, "listed, but no persistent id of the state dict names it");
    if (where[it->second].present) throw InputError(file, name, "listed twice");
    const PickledStorage& s = state.storages()[it->second];
    if (size - at < 8)
      throw InputError(file, name,
                       fmt::format("its element count at byte {} is past the end of the file (truncated?)", at));
    std::uint64_t count = 0;
    for (int i = 8; i-- > 0;) count = (count << 8) | bytes[at + i];
    if (count != s.numel)
      throw InputError(file, name, fmt::format("the file says {} elements, its persistent id {}", count, s.numel));
    if (count > (size - at - 8) / s.type->element_bytes)
      throw InputError(file, name,
                       fmt::format("its {} elements of {} bytes at byte {} go past the end of the file (truncated?)",
                                   count, s.type->element_bytes, at + 8));
    where[it->second] = {true, at + 8, count * s.type->element_bytes};
    at += 8 + count * s.type->element_bytes;
  }
  return where;
}

std::vector<StoredTensor> parse_legacy_bin(const std::uint8_t* bytes, std::uint64_t size, const std::string& file,
                                           std::uint64_t* reading_bytes) {
  std::uint64_t at = 0;
  check_legacy_header(bytes, size, at, file);
  const char* state_name = "the state dict's pickle";
  const SmallPickle state(bytes, size, at, file, state_name, PersistentIds::Legacy);
  const SmallPickle keys(bytes, size, at, file, "the storage keys' pickle");
  if (reading_bytes) *reading_bytes = state.machine.held_bytes() + keys.machine.held_bytes();
  const std::vector<StorageBytes> where = legacy_storages(bytes, size, at, state.machine, keys, file);
  if (at != size) throw InputError(file, "", fmt::format("{} bytes after the last storage, expected none", size - at));
  return state_dict_tensors(state.machine, state.root, where, file, state_name);
}

}  // namespace

std::vector<StoredTensor> parse_pytorch_bin(const std::uint8_t* bytes, std::uint64_t size, const std::string& file,
                                            std::uint64_t* reading_bytes) {
  if (looks_like_zip(bytes, size)) return parse_zip(bytes, size, file, reading_bytes);
  if (size >= 2 && bytes[0] == 0x80) return parse_legacy_bin(bytes, size, file, reading_bytes);
  if (size >= 262 && std::string(reinterpret_cast<const char*>(bytes + 257), 5) == "ustar")
    throw InputError(file, "", "a tar archive (torch.save's format before PyTorch 0.4), which attn does not read");
  throw InputError(file, "",
                   fmt::format("expected a zip archive (torch.save since PyTorch 1.6) or a pickle (its legacy "
                               "format), found {}",
                               size == 0 ? std::string("an empty file")
                                         : fmt::format("a file starting with the byte 0x{:02x}", bytes[0])));
}

PytorchBinFile::PytorchBinFile(const std::string& path) : file_(path) {
  tensors_ = parse_pytorch_bin(file_.data(), file_.size(), path, &reading_bytes_);
  for (std::size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
}

const StoredTensor* PytorchBinFile::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

TensorView PytorchBinFile::view(const StoredTensor& tensor) const {
  require_float_dtype(tensor, path());
  return TensorView(tensor, file_.data() + tensor.begin);
}

}  // namespace attn
