// NumPy's .npz format, written as it goes: a zip archive (stored, no compression) holding
// one .npy file per tensor, loadable with np.load(path)["encoder.0.attention.q"].
//
// .npy version 1.0: the magic "\x93NUMPY", version bytes 1 0, a little-endian uint16 header
// length, then a Python dict literal {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by '\n' so that the data starts at a multiple of 64 bytes;
// then the float64 values in C order. Zip64 records are added when an entry or the archive
// passes 4 GiB or 65535 entries, as Python's zipfile reads them.
#ifndef ATTN_IO_NPZ_WRITER_H_
#define ATTN_IO_NPZ_WRITER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/tensor.h"
#include "io/output_file.h"

namespace attn {

// CRC-32 as zip and zlib compute it (polynomial 0xEDB88320), continuing from `crc`.
std::uint32_t crc32(const void* data, std::size_t size, std::uint32_t crc = 0);

// The .npy v1.0 header for a C-order float64 array of `shape`, padded to 64 bytes.
std::string npy_header(const Shape& shape);

class NpzWriter {
 public:
  // zip64_from: entry sizes and offsets from this many bytes on get zip64 records (the
  // format's own limit, 0xFFFFFFFF, unless a test wants to see them on small files).
  explicit NpzWriter(ByteOutput& out, std::uint64_t zip64_from = 0xFFFFFFFFu) : out_(out), zip64_from_(zip64_from) {}

  // Adds `name`.npy holding element_count(shape) doubles from `data`.
  void add(const std::string& name, const Shape& shape, const double* data);
  // Writes the central directory; the archive is complete after this.
  void finish();

 private:
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
