// Times the .npz writer's checksum: zlib's crc32 (what src/io/npz_writer.cpp calls) against
// the hand-written slicing-by-8 table it replaced (kept here, only for this comparison),
// over 256 MiB of doubles, the size of a few layers of a base-preset dump.
//
// Not part of the build (attn::crc32 is zlib's crc32 called in chunks of 1 GiB, so this
// calls zlib directly):
//   g++ -std=c++17 -O3 bench/crc32.cpp -o /tmp/crc32_bench -lz && /tmp/crc32_bench [repeats]
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "thread_time.h"

#include <zlib.h>

namespace {

// The hand-written CRC-32 attn used before zlib's: slicing by 8, eight bytes a step.
struct CrcTables {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  CrcTables() {
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (std::uint32_t i = 0; i < 256; ++i)
      for (std::size_t k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFF];
  }
};

std::uint32_t slicing_by_8(const void* data, std::size_t size) {
  static const CrcTables tables;
  const auto& t = tables.t;
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t crc = ~0u;
  while (size >= 8) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    lo ^= crc;
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][hi & 0xFF] ^
          t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) crc = t[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

using bench::best_seconds;

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 5;
  std::vector<double> data(std::size_t{32} << 20);  // 256 MiB
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::sin(static_cast<double>(i));
  const std::size_t bytes = data.size() * sizeof(double);
  std::uint32_t a = 0, b = 0;
  const double hand = best_seconds(repeats, [&] { a = slicing_by_8(data.data(), bytes); });
  const double zlib = best_seconds(repeats, [&] {
    b = static_cast<std::uint32_t>(::crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(bytes)));
  });
  std::printf("crc32 of 256 MiB, processor time, best of %d:\n", repeats);
  std::printf("  hand-written slicing-by-8: %7.1f ms  %5.2f GB/s\n", hand * 1e3, bytes / hand / 1e9);
  std::printf("  zlib crc32:                %7.1f ms  %5.2f GB/s  (%.2fx)\n", zlib * 1e3, bytes / zlib / 1e9,
              hand / zlib);
  if (a != b) {
    std::printf("the two checksums differ: %08x and %08x\n", a, b);
    return 1;
  }
  return 0;
}
