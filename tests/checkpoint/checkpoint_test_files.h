// Writing small safetensors files and checkpoint folders byte by byte for the tests: the
// format is 8 bytes of header length, the JSON header and the raw data, so a test can build
// every broken variant of it by hand.
#ifndef ATTN_TESTS_CHECKPOINT_TEST_FILES_H_
#define ATTN_TESTS_CHECKPOINT_TEST_FILES_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include <catch2/catch.hpp>

namespace attn_test {

// A fresh folder under /tmp, removed with its files when the test ends.
class TempFolder {
 public:
  TempFolder() {
    char name[] = "/tmp/attn_checkpoint_test_XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path_ = name;
  }
  ~TempFolder() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

// The whole content of the file at `path`.
inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The 8-byte little-endian length `n` followed by `header` and `data`.
inline std::string safetensors_bytes(const std::string& header, const std::string& data, std::uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}
inline std::string safetensors_bytes(const std::string& header, const std::string& data) {
  return safetensors_bytes(header, data, header.size());
}

// The raw little-endian bytes of values stored as T (float, double, uint16_t bits).
template <typename T>
std::string raw(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(&out[0], values.data(), out.size());
  return out;
}

}  // namespace attn_test

#endif  // ATTN_TESTS_CHECKPOINT_TEST_FILES_H_
