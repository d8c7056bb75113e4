// The zip archive torch.save writes since PyTorch 1.6 (caffe2/serialize/inline_container.cc,
// miniz): every entry under one folder, "ARCHIVE/data.pkl", "ARCHIVE/data/0", ...,
// "ARCHIVE/version", stored uncompressed (method 0) with its data padded to 64 bytes, and a
// zip64 end record. attn reads the central directory of the mapped file and finds where
// each entry's bytes lie; it never extracts anything to disk, and refuses what torch.save
// does not write (a compressed or encrypted entry, several disks) and what could mislead a
// reader that did (a name that climbs out of the folder: "../x", "/etc/x", "a\x").
#ifndef ATTN_CHECKPOINT_TORCH_ZIP_H_
#define ATTN_CHECKPOINT_TORCH_ZIP_H_

#include <cstdint>
#include <string>
#include <vector>

namespace attn {

// The most entries attn reads: one per storage (a tensor, or tensors sharing one), and a few.
constexpr std::uint64_t kMaxZipEntries = 1u << 20;

struct ZipEntry {
  std::string name;
  std::uint64_t begin = 0, size = 0;  // its bytes: [begin, begin + size) of the file
};

// Whether bytes[0, size) starts as a zip archive does (a local file header, "PK\3\4").
bool looks_like_zip(const std::uint8_t* bytes, std::uint64_t size);

// The entries of the zip archive whose whole content is bytes[0, size), in the central
// directory's order, each checked: stored, its bytes inside the file before the central
// directory, its name a plain relative path given once. InputError naming `file` and the
// entry (or "end of central directory") otherwise.
std::vector<ZipEntry> read_zip_entries(const std::uint8_t* bytes, std::uint64_t size, const std::string& file);

}  // namespace attn

#endif  // ATTN_CHECKPOINT_TORCH_ZIP_H_
