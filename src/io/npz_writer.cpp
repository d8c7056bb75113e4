#include "io/npz_writer.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace attn {

namespace {

// Little-endian fields of the zip records.
void put16(std::string& out, std::uint16_t v) {
  out += static_cast<char>(v & 0xFF);
  out += static_cast<char>(v >> 8);
}
void put32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

constexpr std::uint32_t kMax32 = 0xFFFFFFFFu;
constexpr std::uint16_t kMax16 = 0xFFFF;
// A fixed modification time, 1980-01-01 00:00 (the zip epoch), so equal runs give equal files.
constexpr std::uint16_t kDosTime = 0;
constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr std::uint16_t kVersionPlain = 20;  // 2.0: stored files
constexpr std::uint16_t kVersionZip64 = 45;  // 4.5: zip64 extensions
constexpr std::uint16_t kUtf8Names = 1 << 11;

}  // namespace

std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc) {
  // zlib takes at most 4 GiB - 1 bytes a call (uInt); a tensor can be more.
  const auto* p = static_cast<const Bytef*>(data);
  uLong value = crc;
  while (size > 0) {
    const std::size_t n = std::min<std::size_t>(size, std::size_t{1} << 30);
    value = ::crc32(value, p, static_cast<uInt>(n));
    p += n;
    size -= n;
  }
  return static_cast<std::uint32_t>(value);
}

std::string npy_header(const Shape& shape, NpyType type) {
  // Python's repr of the shape tuple: (), (3,), (2, 3)
  std::string dims = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  dims += ")";
  const char* descr = type == NpyType::Int64 ? "<i8" : type == NpyType::Bool ? "|b1" : "<f8";
  std::string dict = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + dims + ", }";
  // magic (6) + version (2) + length (2) + dict + padding + '\n', a multiple of 64
  const std::size_t unpadded = 10 + dict.size() + 1;
  const std::size_t total = (unpadded + 63) / 64 * 64;
  if (total - 10 > kMax16) throw std::length_error("npy_header: shape too long for a version 1.0 header");
  dict.append(total - unpadded, ' ');
  dict += '\n';
  std::string header("\x93NUMPY\x01\x00", 8);
  put16(header, static_cast<std::uint16_t>(dict.size()));
  return header + dict;
}

void NpzWriter::add(const std::string& name, const Shape& shape, const double* data, NpyType type) {
  static_assert(std::numeric_limits<double>::is_iec559, "the .npy data is IEEE 754 float64");
  const std::string header = npy_header(shape, type);
  const std::size_t n = element_count(shape);
  if (type == NpyType::Float64) {
    add_entry(name + ".npy", header, reinterpret_cast<const char*>(data), n * sizeof(double));
    return;
  }
  // Token ids and masks: small tensors (B,S), converted whole.
  std::vector<char> converted;
  if (type == NpyType::Int64) {
    converted.resize(n * sizeof(std::int64_t));
    for (std::size_t i = 0; i < n; ++i) {
      const auto v = static_cast<std::int64_t>(data[i]);  // little-endian, as '<i8' says
      std::memcpy(converted.data() + i * sizeof v, &v, sizeof v);
    }
  } else {
    converted.resize(n);
    for (std::size_t i = 0; i < n; ++i) converted[i] = data[i] != 0.0 ? 1 : 0;
  }
  add_entry(name + ".npy", header, converted.data(), converted.size());
}

void NpzWriter::add_file(const std::string& file_name, const std::string& bytes) {
  add_entry(file_name, "", bytes.data(), bytes.size());
}

void NpzWriter::add_entry(std::string file_name, const std::string& head, const char* data, std::size_t size) {
  Entry entry{std::move(file_name), 0, head.size() + size, offset_};
  entry.crc = crc32(data, size, crc32(head.data(), head.size()));
  const bool zip64 = entry.size >= zip64_from_;

  std::string local;
  put32(local, 0x04034b50);
  put16(local, zip64 ? kVersionZip64 : kVersionPlain);
  put16(local, kUtf8Names);
  put16(local, 0);  // stored
  put16(local, kDosTime);
  put16(local, kDosDate);
  put32(local, entry.crc);
  put32(local, zip64 ? kMax32 : static_cast<std::uint32_t>(entry.size));
  put32(local, zip64 ? kMax32 : static_cast<std::uint32_t>(entry.size));
  put16(local, static_cast<std::uint16_t>(entry.file_name.size()));
  put16(local, zip64 ? 20 : 0);
  local += entry.file_name;
  if (zip64) {
    put16(local, 0x0001);  // zip64 extra field: both sizes
    put16(local, 16);
    put64(local, entry.size);
    put64(local, entry.size);
  }
  out_.write(local);
  out_.write(head);
  out_.write(data, size);
  offset_ += local.size() + entry.size;
  entries_.push_back(std::move(entry));
}

void NpzWriter::finish() {
  const std::uint64_t directory_offset = offset_;
  std::string directory;
  for (const Entry& e : entries_) {
    const bool big_size = e.size >= zip64_from_, big_offset = e.offset >= zip64_from_;
    std::string extra;
    if (big_size || big_offset) {
      // Only the fields whose 32-bit slot holds 0xFFFFFFFF, in this order.
      std::string values;
      if (big_size) {
        put64(values, e.size);
        put64(values, e.size);
      }
      if (big_offset) put64(values, e.offset);
      put16(extra, 0x0001);
      put16(extra, static_cast<std::uint16_t>(values.size()));
      extra += values;
    }
    const std::uint16_t version = extra.empty() ? kVersionPlain : kVersionZip64;
    put32(directory, 0x02014b50);
    put16(directory, version);  // made by
    put16(directory, version);  // needed to extract
    put16(directory, kUtf8Names);
    put16(directory, 0);
    put16(directory, kDosTime);
    put16(directory, kDosDate);
    put32(directory, e.crc);
    put32(directory, big_size ? kMax32 : static_cast<std::uint32_t>(e.size));
    put32(directory, big_size ? kMax32 : static_cast<std::uint32_t>(e.size));
    put16(directory, static_cast<std::uint16_t>(e.file_name.size()));
    put16(directory, static_cast<std::uint16_t>(extra.size()));
    put16(directory, 0);  // comment length
    put16(directory, 0);  // disk number
    put16(directory, 0);  // internal attributes
    put32(directory, 0);  // external attributes
    put32(directory, big_offset ? kMax32 : static_cast<std::uint32_t>(e.offset));
    directory += e.file_name;
    directory += extra;
  }
  const std::uint64_t count = entries_.size();
  const std::uint64_t directory_size = directory.size();
  const bool zip64 = count >= kMax16 || directory_offset >= zip64_from_ || directory_size >= zip64_from_;
  if (zip64) {
    const std::uint64_t record_offset = directory_offset + directory_size;
    put32(directory, 0x06064b50);  // zip64 end of central directory record
    put64(directory, 44);          // its size after this field
    put16(directory, kVersionZip64);
    put16(directory, kVersionZip64);
    put32(directory, 0);
    put32(directory, 0);
    put64(directory, count);
    put64(directory, count);
    put64(directory, directory_size);
    put64(directory, directory_offset);
    put32(directory, 0x07064b50);  // zip64 end of central directory locator
    put32(directory, 0);
    put64(directory, record_offset);
    put32(directory, 1);
  }
  put32(directory, 0x06054b50);  // end of central directory
  put16(directory, 0);
  put16(directory, 0);
  put16(directory, zip64 ? kMax16 : static_cast<std::uint16_t>(count));
  put16(directory, zip64 ? kMax16 : static_cast<std::uint16_t>(count));
  put32(directory, zip64 ? kMax32 : static_cast<std::uint32_t>(directory_size));
  put32(directory, zip64 ? kMax32 : static_cast<std::uint32_t>(directory_offset));
  put16(directory, 0);  // comment length
  out_.write(directory);
  offset_ += directory.size();
}

}  // namespace attn
