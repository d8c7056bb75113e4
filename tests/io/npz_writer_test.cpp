#include "io/npz_writer.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace {

std::uint32_t u32(const std::string& s, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(s[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + 3])) << 24;
}
std::uint16_t u16(const std::string& s, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(s[at]) | static_cast<unsigned char>(s[at + 1]) << 8);
}
std::uint64_t u64(const std::string& s, std::size_t at) { return u32(s, at) | std::uint64_t{u32(s, at + 4)} << 32; }

// What np.save writes before the data: np.save(f, np.arange(6.0).reshape(2, 3)).
std::string numpy_header(const std::string& shape, std::size_t padding) {
  return std::string("\x93NUMPY\x01\x00v\x00", 10) + "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape +
         ", }" + std::string(padding, ' ') + "\n";
}

const std::vector<double> kArange6 = {0, 1, 2, 3, 4, 5};

}  // namespace

TEST_CASE("crc32 gives zlib's values", "[npz]") {
  // zlib.crc32(b"123456789") == 0xcbf43926, the standard check value
  CHECK(attn::crc32("123456789", 9) == 0xCBF43926u);
  CHECK(attn::crc32("", 0) == 0u);
  // continuing from an earlier crc is the crc of the concatenation
  CHECK(attn::crc32("56789", 5, attn::crc32("1234", 4)) == 0xCBF43926u);
  // the unaligned tail after the 8-byte steps: zlib.crc32(b"123456789" * 3) == 0x4ddf6e59
  const std::string three = "123456789123456789123456789";
  CHECK(attn::crc32(three.data(), three.size()) == 0x4DDF6E59u);
}

TEST_CASE("npy headers are byte for byte what np.save writes", "[npz]") {
  CHECK(attn::npy_header({2, 3}) == numpy_header("(2, 3)", 58));
  CHECK(attn::npy_header({}) == numpy_header("()", 62));
  CHECK(attn::npy_header({5}) == numpy_header("(5,)", 60));
  CHECK(attn::npy_header({1, 512, 2048}) == numpy_header("(1, 512, 2048)", 50));
  CHECK(attn::npy_header({2, 3}).size() % 64 == 0);
}

TEST_CASE("an npz is a stored zip of .npy files with the right CRC, sizes and directory", "[npz]") {
  attn::StringOutput out;
  attn::NpzWriter npz(out);
  npz.add("a", {2, 3}, kArange6.data());
  npz.add("enc.q", {5}, kArange6.data());
  npz.finish();
  const std::string& z = out.text;

  // local header of a.npy
  CHECK(u32(z, 0) == 0x04034b50u);
  CHECK(u16(z, 4) == 20);  // version needed 2.0
  CHECK(u16(z, 8) == 0);   // stored
  // zlib.crc32(open("a.npy","rb").read()) for np.save("a.npy", np.arange(6.0).reshape(2, 3))
  CHECK(u32(z, 14) == 0x463bcdf0u);
  CHECK(u32(z, 18) == 176);  // 128-byte header + 6 doubles
  CHECK(u32(z, 22) == 176);
  CHECK(u16(z, 26) == 5);
  CHECK(u16(z, 28) == 0);
  CHECK(z.substr(30, 5) == "a.npy");
  CHECK(z.substr(35, 128) == numpy_header("(2, 3)", 58));
  double third;
  std::memcpy(&third, z.data() + 35 + 128 + 2 * 8, 8);
  CHECK(third == 2.0);

  // local header of enc.q.npy right after
  const std::size_t second = 35 + 176;
  CHECK(u32(z, second) == 0x04034b50u);
  CHECK(u32(z, second + 14) == 0x66e1c6ddu);  // zlib.crc32 of np.save(np.arange(5.0))
  CHECK(z.substr(second + 30, 9) == "enc.q.npy");

  // the central directory, then the end record
  const std::size_t directory = second + 30 + 9 + 128 + 40;
  CHECK(u32(z, directory) == 0x02014b50u);
  CHECK(u32(z, directory + 16) == 0x463bcdf0u);
  CHECK(u32(z, directory + 42) == 0);  // a.npy's local header offset
  const std::size_t entry2 = directory + 46 + 5;
  CHECK(u32(z, entry2) == 0x02014b50u);
  CHECK(u32(z, entry2 + 42) == second);
  const std::size_t end = entry2 + 46 + 9;
  REQUIRE(z.size() == end + 22);
  CHECK(u32(z, end) == 0x06054b50u);
  CHECK(u16(z, end + 8) == 2);                 // entries on this disk
  CHECK(u16(z, end + 10) == 2);                // entries in all
  CHECK(u32(z, end + 12) == end - directory);  // directory size
  CHECK(u32(z, end + 16) == directory);        // directory offset
}

TEST_CASE("past 4 GiB the npz carries zip64 records (tried here from byte 0)", "[npz]") {
  attn::StringOutput out;
  attn::NpzWriter npz(out, 0);
  npz.add("a", {2, 3}, kArange6.data());
  npz.finish();
  const std::string& z = out.text;
  CHECK(u16(z, 4) == 45);            // version needed 4.5
  CHECK(u32(z, 18) == 0xFFFFFFFFu);  // sizes in the zip64 extra field
  CHECK(u16(z, 28) == 20);
  CHECK(u16(z, 35) == 0x0001);
  CHECK(u64(z, 39) == 176);
  CHECK(u64(z, 47) == 176);
  const std::size_t directory = 55 + 176;
  CHECK(u32(z, directory) == 0x02014b50u);
  CHECK(u32(z, directory + 42) == 0xFFFFFFFFu);     // offset in the extra field too
  CHECK(u16(z, directory + 30) == 28);              // sizes and offset: 4 + 3 * 8
  CHECK(u64(z, directory + 46 + 5 + 4 + 16) == 0);  // a.npy at offset 0
  const std::size_t record = directory + 46 + 5 + 28;
  CHECK(u32(z, record) == 0x06064b50u);
  CHECK(u64(z, record + 24) == 1);            // entries
  CHECK(u64(z, record + 48) == directory);    // directory offset
  CHECK(u32(z, record + 56) == 0x07064b50u);  // locator
  CHECK(u64(z, record + 64) == record);
  CHECK(u32(z, record + 76) == 0x06054b50u);
  CHECK(z.size() == record + 76 + 22);
}
