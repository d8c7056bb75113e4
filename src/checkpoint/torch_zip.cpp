#include "checkpoint/torch_zip.h"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

namespace {

constexpr std::uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEndRecord = 0x06054b50,
                        kZip64EndRecord = 0x06064b50, kZip64Locator = 0x07064b50;
constexpr std::uint64_t kLocalHeaderBytes = 30, kCentralHeaderBytes = 46, kEndRecordBytes = 22;
constexpr std::uint64_t kZip64LocatorBytes = 20, kZip64EndRecordBytes = 56;
constexpr const char* kEnd = "end of central directory";

std::uint64_t le(const std::uint8_t* p, int n) {
  std::uint64_t v = 0;
  for (int i = n; i-- > 0;) v = (v << 8) | p[i];
  return v;
}

struct Directory {
  std::uint64_t entries = 0, begin = 0, size = 0;
  std::uint64_t end = 0;  // where the records after the directory start
};

// The end record is the last 22 bytes but for a comment of up to 64 KiB: searched from the end.
std::uint64_t find_end_record(const std::uint8_t* bytes, std::uint64_t size, const std::string& file) {
  if (size >= kEndRecordBytes) {
    const std::uint64_t lowest = size - kEndRecordBytes > 0xffff ? size - kEndRecordBytes - 0xffff : 0;
    for (std::uint64_t at = size - kEndRecordBytes + 1; at-- > lowest;)
      if (le(bytes + at, 4) == kEndRecord && at + kEndRecordBytes + le(bytes + at + 20, 2) == size) return at;
  }
  throw InputError(file, kEnd, "expected a zip archive's end record in its last 64 KiB, found none (truncated?)");
}

// The zip64 end record, which torch.save always writes; its numbers stand for the end
// record's when those are saturated (0xffff, 0xffffffff).
void read_zip64_end(const std::uint8_t* bytes, std::uint64_t end_at, const std::string& file, Directory& d) {
  if (end_at < kZip64LocatorBytes || le(bytes + end_at - kZip64LocatorBytes, 4) != kZip64Locator)
    throw InputError(file, kEnd, "the end record says the archive is zip64, but no zip64 locator precedes it");
  const std::uint8_t* locator = bytes + end_at - kZip64LocatorBytes;
  const std::uint64_t at = le(locator + 8, 8);
  if (at > end_at - kZip64LocatorBytes || end_at - kZip64LocatorBytes - at < kZip64EndRecordBytes ||
      le(bytes + at, 4) != kZip64EndRecord)
    throw InputError(file, kEnd, fmt::format("the zip64 locator points at byte {}, where no zip64 end record is", at));
  const std::uint8_t* r = bytes + at;
  if (le(r + 16, 4) != 0 || le(r + 20, 4) != 0 || le(r + 24, 8) != le(r + 32, 8))
    throw InputError(file, kEnd, "the archive spans several disks, which torch.save never writes");
  d.entries = le(r + 32, 8);
  d.size = le(r + 40, 8);
  d.begin = le(r + 48, 8);
  d.end = at;
}

Directory read_end(const std::uint8_t* bytes, std::uint64_t size, const std::string& file) {
  const std::uint64_t at = find_end_record(bytes, size, file);
  const std::uint8_t* r = bytes + at;
  Directory d{le(r + 10, 2), le(r + 16, 4), le(r + 12, 4), at};
  if (d.entries == 0xffff || d.begin == 0xffffffff || d.size == 0xffffffff) {
    read_zip64_end(bytes, at, file, d);
  } else if (le(r + 4, 2) != 0 || le(r + 6, 2) != 0 || le(r + 8, 2) != d.entries) {
    throw InputError(file, kEnd, "the archive spans several disks, which torch.save never writes");
  } else if (at >= kZip64LocatorBytes && le(r - kZip64LocatorBytes, 4) == kZip64Locator) {
    d.end = std::min<std::uint64_t>(d.end, le(r - kZip64LocatorBytes + 8, 8));
  }
  if (d.begin > d.end || d.size > d.end - d.begin)
    throw InputError(file, kEnd,
                     fmt::format("the central directory [{}, {}) goes past the end records at byte {} (truncated?)",
                                 d.begin, d.begin + d.size, d.end));
  if (d.entries > kMaxZipEntries || d.entries > d.size / kCentralHeaderBytes)
    throw InputError(file, kEnd,
                     fmt::format("{} entries, expected at most {} (and {} bytes of directory hold at most {})",
                                 d.entries, kMaxZipEntries, d.size, d.size / kCentralHeaderBytes));
  return d;
}

// A name torch.save writes: "archive/data/0". Refused: empty, absolute, "..", ".", a
// backslash, a NUL, an empty component.
bool plain_relative_path(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\\') != std::string::npos ||
      name.find('\0') != std::string::npos)
    return false;
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t slash = std::min(name.find('/', start), name.size());
    const std::string part = name.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = slash + 1;
  }
  return true;
}

// Sizes the zip64 extra field (id 1) gives for those saturated in the fixed fields: the
// uncompressed size, the compressed size, the local header's offset, in that order.
void read_zip64_extra(const std::uint8_t* extra, std::uint64_t length, std::uint64_t* fields[3],
                      const std::string& file, const std::string& name) {
  for (std::uint64_t at = 0; at + 4 <= length;) {
    const std::uint64_t id = le(extra + at, 2), n = le(extra + at + 2, 2);
    if (n > length - at - 4) break;
    if (id == 1) {
      std::uint64_t used = 0;
      for (int i = 0; i < 3; ++i) {
        if (*fields[i] != 0xffffffff) continue;
        if (used + 8 > n) throw InputError(file, name, "the zip64 extra field is shorter than the sizes it stands for");
        *fields[i] = le(extra + at + 4 + used, 8);
        used += 8;
      }
      return;
    }
    at += 4 + n;
  }
  for (int i = 0; i < 3; ++i)
    if (*fields[i] == 0xffffffff) throw InputError(file, name, "expected a zip64 extra field, found none");
}

}  // namespace

bool looks_like_zip(const std::uint8_t* bytes, std::uint64_t size) { return size >= 4 && le(bytes, 4) == kLocalHeader; }

namespace {

ZipEntry read_entry(const std::uint8_t* bytes, std::uint64_t size, const Directory& d, std::uint64_t& at,
                    const std::string& file) {
  const std::uint64_t dir_end = d.begin + d.size;
  if (dir_end - at < kCentralHeaderBytes || le(bytes + at, 4) != kCentralHeader)
    throw InputError(file, kEnd, fmt::format("expected a central directory header at byte {}, found none", at));
  const std::uint8_t* h = bytes + at;
  const std::uint64_t name_length = le(h + 28, 2), extra_length = le(h + 30, 2), comment = le(h + 32, 2);
  if (kCentralHeaderBytes + name_length + extra_length + comment > dir_end - at)
    throw InputError(file, kEnd, fmt::format("the central directory header at byte {} goes past the directory", at));
  ZipEntry e;
  e.name.assign(reinterpret_cast<const char*>(h + kCentralHeaderBytes), name_length);
  if (!plain_relative_path(e.name))
    throw InputError(file, e.name,
                     "a zip entry named outside the archive's folder (\"..\", \"/\", \"\\\" or empty "
                     "parts): torch.save writes only \"archive/data/KEY\" and the like");
  std::uint64_t compressed = le(h + 20, 4), offset = le(h + 42, 4);
  e.size = le(h + 24, 4);
  std::uint64_t* fields[3] = {&e.size, &compressed, &offset};
  read_zip64_extra(h + kCentralHeaderBytes + name_length, extra_length, fields, file, e.name);
  if (le(h + 8, 2) & 1) throw InputError(file, e.name, "the entry is encrypted, which torch.save never writes");
  if (le(h + 10, 2) != 0 || compressed != e.size)
    throw InputError(file, e.name,
                     fmt::format("the entry is compressed (method {}): torch.save stores its entries as they are, "
                                 "and attn reads them where they lie",
                                 le(h + 10, 2)));
  if (offset > d.begin || d.begin - offset < kLocalHeaderBytes || le(bytes + offset, 4) != kLocalHeader)
    throw InputError(file, e.name, fmt::format("no local header at byte {}, where the directory says", offset));
  const std::uint64_t local_name = le(bytes + offset + 26, 2), local_extra = le(bytes + offset + 28, 2);
  e.begin = offset + kLocalHeaderBytes + local_name + local_extra;
  if (e.begin > d.begin || e.size > d.begin - e.begin)
    throw InputError(file, e.name,
                     fmt::format("its {} bytes at byte {} go past the entries' end at byte {} (truncated?)", e.size,
                                 e.begin, d.begin));
  if (local_name != name_length ||
      !std::equal(h + kCentralHeaderBytes, h + kCentralHeaderBytes + name_length, bytes + offset + kLocalHeaderBytes))
    throw InputError(file, e.name, "its local header names another entry");
  (void)size;
  at += kCentralHeaderBytes + name_length + extra_length + comment;
  return e;
}

}  // namespace

std::vector<ZipEntry> read_zip_entries(const std::uint8_t* bytes, std::uint64_t size, const std::string& file) {
  const Directory d = read_end(bytes, size, file);
  std::vector<ZipEntry> entries;
  std::unordered_set<std::string> names;
  std::uint64_t at = d.begin;
  for (std::uint64_t i = 0; i < d.entries; ++i) {
    entries.push_back(read_entry(bytes, size, d, at, file));
    if (!names.insert(entries.back().name).second)
      throw InputError(file, entries.back().name, "the archive holds two entries of this name");
  }
  return entries;
}

}  // namespace attn
