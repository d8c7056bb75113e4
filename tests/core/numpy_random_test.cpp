#include "core/numpy_random.h"

#include <cstdlib>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "model/json_reader.h"

// Reference values: Debian's python3-numpy 1.24,
//   np.random.seed(0); np.random.randn(8)   and   np.random.seed(42); np.random.random_sample(2)
// compared exactly: the stream must be NumPy's bit for bit, not merely close.
TEST_CASE("randn reproduces np.random.seed(0) then np.random.randn exactly", "[random]") {
  attn::NumpyRandom rng(0);
  const double expected[] = {1.764052345967664,  0.4001572083672233, 0.9787379841057392, 2.240893199201458,
                             1.8675579901499675, -0.977277879876411, 0.9500884175255894, -0.1513572082976979};
  for (double e : expected) CHECK(rng.standard_normal() == e);
}

TEST_CASE("random_sample reproduces np.random.seed(42) then np.random.random_sample", "[random]") {
  attn::NumpyRandom rng(42);
  CHECK(rng.random_sample() == 0.3745401188473625);
  CHECK(rng.random_sample() == 0.9507143064099162);
}

TEST_CASE("randn fills a shape in C order from one stream", "[random]") {
  // Seed 003: np.random.seed(0); token_embeddings = np.random.randn(4, 8) prints
  // [[ 1.764  0.4    0.979  2.241  1.868 -0.977  0.95  -0.151] ...; the first value of W_q =
  // np.random.randn(8, 4) that follows is the 33rd draw.
  attn::NumpyRandom rng(0);
  const attn::Tensor x = rng.randn({4, 8});
  CHECK(x.at({0, 3}) == 2.240893199201458);
  CHECK(x.at({3, 0}) == 2.2697546239876076);
  const attn::Tensor w = rng.randn({8, 4});
  CHECK(w.at({0, 0}) == -0.8877857476301128);
}

TEST_CASE("200000 draws per seed equal NumPy's exactly (no fused multiply-add crept in)", "[random]") {
  // tests/reference/numpy_randn_cases.json, made by make_numpy_randn_cases.py with NumPy 1.24:
  // np.random.seed(seed); a = np.random.randn(200000); values at spread indices as repr() and
  // the left-to-right float64 sum of all draws. Contracting x1*x1 + x2*x2 into an FMA changes
  // the last bit of many draws (and so the sum); a pair wrongly rejected or kept shifts every
  // value after it. Both are caught here by exact equality.
  const attn::Json doc =
      attn::parse_json(attn::read_text_file(std::string(ATTN_SOURCE_DIR) + "/tests/reference/numpy_randn_cases.json"),
                       "numpy_randn_cases.json");
  const auto exact = [](const attn::Json& repr) { return std::strtod(repr.get<std::string>().c_str(), nullptr); };
  REQUIRE(doc.at("cases").size() == 4);
  for (const attn::Json& c : doc.at("cases")) {
    const std::uint32_t seed = c.at("seed").get<std::uint32_t>();
    const std::size_t draws = c.at("draws").get<std::size_t>();
    INFO("seed " << seed);
    attn::NumpyRandom rng(seed);
    const attn::Tensor a = rng.randn({draws});
    for (const attn::Json& v : c.at("values")) {
      const std::size_t i = v.at("index").get<std::size_t>();
      INFO(fmt::format("index {}: attn {:.17g}, numpy {}", i, a.data.at(i), v.at("value").get<std::string>()));
      CHECK(a.data.at(i) == exact(v.at("value")));
    }
    double sum = 0.0;
    for (double x : a.data) sum += x;  // left to right, as the Python loop that made the reference
    INFO(fmt::format("sum: attn {:.17g}, numpy {}", sum, c.at("left_to_right_sum").get<std::string>()));
    CHECK(sum == exact(c.at("left_to_right_sum")));
  }
}

TEST_CASE("the 32-bit MT19937 is std::mt19937's stream", "[random]") {
  // The same generator on 32-bit words: word for word the standard one, from any seed.
  for (const std::uint32_t seed : {0u, 1u, 5489u, 4294967295u}) {
    attn::Mt19937 words32(seed);
    std::mt19937 standard(seed);
    std::size_t differ = 0;
    for (int i = 0; i < 5000; ++i) differ += words32() != standard();
    CAPTURE(seed);
    CHECK(differ == 0);
  }
  // and the 10000th output from the default seed is the standard's check value
  attn::Mt19937 engine;
  engine.discard(9999);
  CHECK(engine() == 4123659995u);
}
