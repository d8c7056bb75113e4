#include "attn/tensor.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

using attn::Tensor;

TEST_CASE("transposed matches NumPy's transpose(0, 2, 1, 3)", "[tensor]") {
  // a = np.arange(24).reshape(2,3,2,2); a.transpose(0,2,1,3)[1,0,2,1] == a[1,2,0,1] == 21
  Tensor a({2, 3, 2, 2}, {"B", "S", "H", "d"});
  for (std::size_t i = 0; i < a.size(); ++i) a.data[i] = static_cast<double>(i);
  const Tensor t = attn::transposed(a, {0, 2, 1, 3});
  REQUIRE(t.shape == attn::Shape{2, 2, 3, 2});
  REQUIRE(t.axes == attn::AxisNames{"B", "H", "S", "d"});
  CHECK(t.at({1, 0, 2, 1}) == 21.0);
  CHECK(t.at({0, 1, 0, 0}) == 2.0);
  // np.arange(24).reshape(2,3,2,2).transpose(0,2,1,3).ravel()[:6] == [0, 1, 4, 5, 8, 9]
  CHECK(std::vector<double>(t.data.begin(), t.data.begin() + 6) == std::vector<double>{0, 1, 4, 5, 8, 9});
}

TEST_CASE("reshaped keeps the data and checks the element count", "[tensor]") {
  Tensor a({2, 6}, {"S", "N"});
  a.data[7] = 3.5;
  const Tensor r = attn::reshaped(a, {2, 3, 2}, {"S", "H", "d"});
  CHECK(r.at({1, 0, 1}) == 3.5);
  CHECK_THROWS(attn::reshaped(a, {5, 2}, {}));
}

TEST_CASE("shapes print with their axis names", "[tensor]") {
  CHECK(attn::shape_with_axes({2, 2, 6, 2}, {"B", "H", "S", "d"}) == "(B=2,H=2,S=6,d=2)");
  CHECK(attn::shape_with_axes({2, 6, 4}, {}) == "(2, 6, 4)");
  CHECK(attn::shape_string({4, 3}) == "[4, 3]");
}

TEST_CASE("slice_first takes one block along the first axis", "[tensor]") {
  Tensor a({3, 2}, {"S", "N"});
  a.data = {1, 2, 3, 4, 5, 6};
  const Tensor row = attn::slice_first(a, 2);
  CHECK(row.shape == attn::Shape{2});
  CHECK(row.data == std::vector<double>{5, 6});
}

TEST_CASE("take_index removes one axis like NumPy's take", "[tensor]") {
  // a = np.arange(24).reshape(2,3,4); a.take(1, axis=1) == [[4,5,6,7],[16,17,18,19]]
  Tensor a({2, 3, 4}, {"B", "H", "S"});
  for (std::size_t i = 0; i < a.size(); ++i) a.data[i] = static_cast<double>(i);
  const Tensor t = attn::take_index(a, 1, 1);
  CHECK(t.shape == attn::Shape{2, 4});
  CHECK(t.axes == attn::AxisNames{"B", "S"});
  CHECK(t.data == std::vector<double>{4, 5, 6, 7, 16, 17, 18, 19});
  CHECK(attn::take_index(a, 0, 1).data[0] == 12.0);
  CHECK_THROWS(attn::take_index(a, 2, 4));
}

TEST_CASE("transposed moves the last axis (strided rows) like NumPy's transpose(2, 0, 1)", "[tensor]") {
  Tensor a({2, 3, 4}, {"B", "S", "N"});
  for (std::size_t i = 0; i < a.size(); ++i) a.data[i] = static_cast<double>(i);
  const Tensor t = attn::transposed(a, {2, 0, 1});
  REQUIRE(t.shape == attn::Shape{4, 2, 3});
  // np.arange(24).reshape(2,3,4).transpose(2,0,1).ravel().tolist()
  CHECK(t.data ==
        std::vector<double>{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
}

TEST_CASE("transposed swaps the last two axes of every matrix (k -> k_t), also past one 8x8 tile", "[tensor]") {
  // b = np.arange(594).reshape(2,3,9,11); t = b.transpose(0,1,3,2)
  Tensor b({2, 3, 9, 11}, {"B", "H", "T", "d"});
  for (std::size_t i = 0; i < b.size(); ++i) b.data[i] = static_cast<double>(i);
  const Tensor t = attn::transposed(b, {0, 1, 3, 2});
  REQUIRE(t.shape == attn::Shape{2, 3, 11, 9});
  REQUIRE(t.axes == attn::AxisNames{"B", "H", "d", "T"});
  CHECK(t.at({1, 2, 10, 8}) == 593.0);
  CHECK(t.at({0, 1, 3, 7}) == 179.0);
  CHECK(std::vector<double>(t.data.begin(), t.data.begin() + 12) ==
        std::vector<double>{0, 11, 22, 33, 44, 55, 66, 77, 88, 1, 12, 23});
  CHECK(std::vector<double>(t.data.end() - 3, t.data.end()) == std::vector<double>{571, 582, 593});
}

TEST_CASE("transposed of a scalar or an empty tensor keeps its data", "[tensor]") {
  Tensor s;
  s.data = {4.5};
  CHECK(attn::transposed(s, {}).data == std::vector<double>{4.5});
  const Tensor e({0, 3}, {"S", "N"});
  CHECK(attn::transposed(e, {1, 0}).shape == attn::Shape{3, 0});
}

TEST_CASE("pairwise_sum adds in NumPy's order, to the last bit", "[tensor]") {
  // np.add.reduce([1e16, 1, 1, 1, 1, 1, 1, 1, 1]) == 1.0000000000000008e+16; a plain loop
  // loses every 1 and gives 1e16.
  const std::vector<double> ones = {1e16, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK(attn::pairwise_sum(ones.data(), ones.size()) == 1.0000000000000008e+16);
  // x = np.array([((i*7919) % 1000 - 500) / 7.0 * (1e9 if i % 3 == 0 else 1.0) for i in range(300)])
  // np.add.reduce(x) == -121428571285.71443 (a plain loop: -121428571285.71452);
  // np.add.reduce(x[:129]) == -132714285615.28575 (one split past the 128 block)
  std::vector<double> x(300);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<double>(static_cast<long>((i * 7919) % 1000) - 500) / 7.0 * (i % 3 == 0 ? 1e9 : 1.0);
  CHECK(attn::pairwise_sum(x.data(), 300) == -121428571285.71443);
  CHECK(attn::pairwise_sum(x.data(), 129) == -132714285615.28575);
  CHECK(attn::pairwise_sum(x.data(), 0) == 0.0);
}

namespace {

// The VmFlags line of the mapping of /proc/self/smaps that holds address p ("" if none).
std::string vm_flags_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= address && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

}  // namespace

TEST_CASE("a big tensor's memory is advised to huge pages", "[tensor]") {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(thp, modes);
  if (modes.empty() || modes.find("[never]") != std::string::npos) {
    WARN("no transparent huge pages on this system: nothing to check");
    return;
  }
  // 16 MiB: at least 6 whole 2 MiB pages inside, whatever the block's alignment.
  const Tensor big = Tensor::uninitialized({2048, 1024});
  const auto first_whole =
      (reinterpret_cast<std::uintptr_t>(big.data.data()) + (2u << 20) - 1) & ~std::uintptr_t{(2u << 20) - 1};
  // "hg": madvise(MADV_HUGEPAGE) (proc(5)).
  CHECK(vm_flags_at(reinterpret_cast<const void*>(first_whole)).find(" hg") != std::string::npos);
}
