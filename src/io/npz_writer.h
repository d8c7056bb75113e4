// NumPy's .npz format, written as it goes: a zip archive (stored, no compression) holding
// one .npy file per tensor, loadable with np.load(path)["encoder.0.attention.q"], and any
// other file (the dump's "__meta__.json", which np.load gives as bytes).
//
// .npy version 1.0: the magic "\x93NUMPY", version bytes 1 0, a little-endian uint16 header
// length, then a Python dict literal {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by '\n' so that the data starts at a multiple of 64 bytes;
// then the values in C order: float64 ('<f8'), int64 ('<i8') or bool ('|b1', one byte
// each). Zip64 records are added when an entry or the archive passes 4 GiB or 65535
// entries, as Python's zipfile reads them. The checksums are zlib's crc32.
#ifndef ATTN_IO_NPZ_WRITER_H_
#define ATTN_IO_NPZ_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/tensor.h"
#include "io/output_file.h"

namespace attn {

// CRC-32 as zip computes it, continuing from `crc`: zlib's crc32, for any size.
std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc = 0);

// What an .npy array holds.
enum class NpyType { Float64, Int64, Bool };

// The .npy v1.0 header for a C-order array of `shape` and `type`, padded to 64 bytes.
std::string npy_header(const Shape& shape, NpyType type = NpyType::Float64);

class NpzWriter {
 public:
  // zip64_from: entry sizes and offsets from this many bytes on get zip64 records (the
  // format's own limit, 0xFFFFFFFF, unless a test wants to see them on small files).
  explicit NpzWriter(ByteOutput& out, std::uint64_t zip64_from = 0xFFFFFFFFu) : out_(out), zip64_from_(zip64_from) {}

  // Adds `name`.npy holding the element_count(shape) values at `data` as `type`: the
  // doubles themselves, or converted to int64 (whole numbers) or bool (v != 0).
  void add(const std::string& name, const Shape& shape, const double* data, NpyType type = NpyType::Float64);
  // Adds a file named `file_name` holding `bytes` as they are.
  void add_file(const std::string& file_name, const std::string& bytes);
  // Writes the central directory; the archive is complete after this.
  void finish();

 private:
  // The local header, then `head` and `size` bytes of `data`, as one stored file.
  void add_entry(std::string file_name, const std::string& head, const char* data, std::size_t size);

  struct Entry {
    std::string file_name;
    std::uint32_t crc;
    std::uint64_t size;    // stored: compressed and uncompressed sizes are equal
    std::uint64_t offset;  // of its local header
  };
  ByteOutput& out_;
  std::uint64_t zip64_from_;
  std::vector<Entry> entries_;
  std::uint64_t offset_ = 0;
};

}  // namespace attn

#endif  // ATTN_IO_NPZ_WRITER_H_
