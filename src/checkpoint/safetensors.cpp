#include "checkpoint/safetensors.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "checkpoint/json_file.h"
#include "core/memory_budget.h"

namespace attn {

namespace {

struct DtypeInfo {
  const char* name;
  Dtype dtype;
  std::uint64_t bytes;
};

// Every dtype of the format with a whole number of bytes per element. The sub-byte ones
// (F4, F6_E2M3, F6_E3M2) are refused by name while the header is read, since their spans
// cannot be checked element by element.
constexpr DtypeInfo kDtypes[] = {
    {"F64", Dtype::F64, 8},       {"F32", Dtype::F32, 4},       {"F16", Dtype::F16, 2},   {"BF16", Dtype::BF16, 2},
    {"BOOL", Dtype::Other, 1},    {"U8", Dtype::Other, 1},      {"I8", Dtype::Other, 1},  {"F8_E5M2", Dtype::Other, 1},
    {"F8_E4M3", Dtype::Other, 1}, {"F8_E8M0", Dtype::Other, 1}, {"I16", Dtype::Other, 2}, {"U16", Dtype::Other, 2},
    {"I32", Dtype::Other, 4},     {"U32", Dtype::Other, 4},     {"I64", Dtype::Other, 8}, {"U64", Dtype::Other, 8},
    {"C64", Dtype::Other, 8},
};
constexpr const char* kSubByteDtypes[] = {"F4", "F6_E2M3", "F6_E3M2"};

const DtypeInfo* dtype_info(const std::string& name) {
  for (const auto& d : kDtypes)
    if (name == d.name) return &d;
  return nullptr;
}

std::uint64_t little_endian_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

Json parse_header_json(const std::uint8_t* bytes, std::uint64_t size, const std::string& file,
                       std::uint64_t* header_length) {
  if (size < 8)
    throw InputError(file, "", fmt::format("expected at least 8 bytes (the header's length), found {}", size));
  const std::uint64_t n = little_endian_u64(bytes);
  if (n > size - 8)
    throw InputError(
        file, "header",
        fmt::format("the header's length is {} bytes, past the end of the file ({} bytes after the length)", n,
                    size - 8));
  if (n > kMaxSafetensorsHeaderBytes)
    throw InputError(file, "header",
                     fmt::format("the header's length is {} bytes, more than the {} MiB attn reads", n,
                                 kMaxSafetensorsHeaderBytes >> 20));
  // once per real file, however many names link to it
  count_json_parse(file, "header", reinterpret_cast<const char*>(bytes + 8), n);
  const std::string text(reinterpret_cast<const char*>(bytes + 8), n);
  if (text.empty() || text[0] != '{')
    throw InputError(file, "header", "expected a JSON object starting with '{' after the header's length");
  if (nested_deeper_than(text, 8)) throw InputError(file, "header", "expected JSON nested at most 8 levels deep");
  Json header;
  try {
    header = Json::parse(text);
  } catch (const Json::exception& e) {
    throw InputError(file, "header", fmt::format("malformed JSON: {}", e.what()));
  }
  if (!header.is_object()) throw InputError(file, "header", "expected a JSON object");
  *header_length = n;
  return header;
}

// A non-negative integer, as nlohmann-json parsed it (2.0 and -1 are not).
std::uint64_t natural(const Json& v, const std::string& file, const std::string& where, const char* what) {
  if (!v.is_number_unsigned()) {
    if (v.is_number_integer())
      throw InputError(file, where, fmt::format("expected {} >= 0, found {}", what, describe_config_value(v)));
    throw InputError(file, where,
                     fmt::format("expected {} (an integer >= 0), found {}", what, describe_config_value(v)));
  }
  return v.get<std::uint64_t>();
}

const Json& field(const Json& entry, const char* key, const std::string& file, const std::string& tensor) {
  const auto it = entry.find(key);
  if (it == entry.end()) throw InputError(file, tensor, fmt::format("missing \"{}\"", key));
  return *it;
}

StoredTensor read_entry(const std::string& name, const Json& entry, const std::string& file) {
  if (!entry.is_object())
    throw InputError(file, name, fmt::format("expected an object, found {}", describe_config_value(entry)));
  StoredTensor t;
  t.name = name;
  const Json& dtype = field(entry, "dtype", file, name);
  if (!dtype.is_string())
    throw InputError(file, name + ".dtype", fmt::format("expected a string, found {}", describe_config_value(dtype)));
  t.dtype_name = dtype.get<std::string>();
  for (const char* sub : kSubByteDtypes)
    if (t.dtype_name == sub)
      throw InputError(file, name, fmt::format("dtype {} is not supported: attn reads F64, F32, F16 and BF16", sub));
  const DtypeInfo* info = dtype_info(t.dtype_name);
  if (!info)
    throw InputError(file, name + ".dtype",
                     fmt::format("unknown dtype \"{}\" (safetensors' dtypes: F64, F32, F16, BF16, F8_E5M2, F8_E4M3, "
                                 "I64, I32, I16, I8, U64, U32, U16, U8, BOOL)",
                                 t.dtype_name));
  t.dtype = info->dtype;

  const Json& shape = field(entry, "shape", file, name);
  if (!shape.is_array())
    throw InputError(file, name + ".shape", fmt::format("expected an array, found {}", describe_config_value(shape)));
  std::uint64_t elements = 1;
  bool overflow = false;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::uint64_t dim = natural(shape[i], file, fmt::format("{}.shape[{}]", name, i), "a dimension");
    t.shape.push_back(static_cast<std::size_t>(dim));
    if (dim != 0 && elements > std::numeric_limits<std::uint64_t>::max() / dim) overflow = true;
    elements *= dim;
  }
  const Json& offsets = field(entry, "data_offsets", file, name);
  if (!offsets.is_array() || offsets.size() != 2)
    throw InputError(file, name + ".data_offsets",
                     fmt::format("expected [begin, end], found {}", describe_config_value(offsets)));
  t.begin = natural(offsets[0], file, name + ".data_offsets[0]", "an offset");
  t.end = natural(offsets[1], file, name + ".data_offsets[1]", "an offset");
  if (t.end < t.begin)
    throw InputError(file, name + ".data_offsets",
                     fmt::format("expected begin <= end, found [{}, {}]", t.begin, t.end));
  const std::uint64_t span = t.end - t.begin;
  if (overflow || (elements != 0 && elements > span / info->bytes) || elements * info->bytes != span)
    throw InputError(
        file, name,
        fmt::format("shape {} of {} needs {} bytes, but data_offsets [{}, {}] span {}", shape.dump(), t.dtype_name,
                    overflow ? std::string("more than 2^64") : std::to_string(elements * info->bytes), t.begin, t.end,
                    span));
  return t;
}

// The spans must tile the data buffer: sorted by offset, each starts where the one before
// ends, the first at 0 and the last at the end of the file.
void check_tiling(std::vector<StoredTensor> sorted, std::uint64_t buffer_size, const std::string& file) {
  std::sort(sorted.begin(), sorted.end(), [](const StoredTensor& a, const StoredTensor& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t expected = 0;
  const StoredTensor* previous = nullptr;
  for (const auto& t : sorted) {
    if (t.end > buffer_size)
      throw InputError(
          file, t.name,
          fmt::format("data_offsets [{}, {}] go past the end of the data ({} bytes)", t.begin, t.end, buffer_size));
    if (t.begin < expected)
      throw InputError(file, t.name,
                       fmt::format("data_offsets [{}, {}] overlap those of \"{}\" [{}, {}]", t.begin, t.end,
                                   previous->name, previous->begin, previous->end));
    if (t.begin > expected)
      throw InputError(file, t.name,
                       fmt::format("data_offsets [{}, {}] leave bytes {} to {} of the data covered by no tensor",
                                   t.begin, t.end, expected, t.begin));
    expected = t.end;
    previous = &t;
  }
  if (expected != buffer_size)
    throw InputError(file, "data_offsets",
                     fmt::format("the tensors cover {} bytes of data, but the file holds {} after the header", expected,
                                 buffer_size));
}

}  // namespace

SafetensorsHeader parse_safetensors_header(const std::uint8_t* bytes, std::uint64_t size, const std::string& file) {
  std::uint64_t n = 0;
  const Json header = parse_header_json(bytes, size, file, &n);
  SafetensorsHeader result;
  result.data_start = 8 + n;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;  // free-form strings: nothing attn needs
    result.tensors.push_back(read_entry(name, entry, file));
  }
  check_tiling(result.tensors, size - result.data_start, file);
  return result;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : file_(path) {
  header_ = parse_safetensors_header(file_.data(), file_.size(), path);
  for (std::size_t i = 0; i < header_.tensors.size(); ++i) index_.emplace(header_.tensors[i].name, i);
}

const StoredTensor* SafetensorsFile::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

TensorView SafetensorsFile::view(const StoredTensor& tensor) const {
  require_float_dtype(tensor, path());
  return TensorView(tensor, file_.data() + header_.data_start + tensor.begin);
}

}  // namespace attn
