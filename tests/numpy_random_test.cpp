#include "attn/numpy_random.h"

#include <catch2/catch.hpp>

// Reference values: Debian's python3-numpy 1.24,
//   np.random.seed(0); np.random.randn(8)   and   np.random.seed(42); np.random.random_sample(2)
// compared exactly: the stream must be NumPy's bit for bit, not merely close.
TEST_CASE("randn reproduces np.random.seed(0); np.random.randn exactly", "[random]") {
  attn::NumpyRandom rng(0);
  const double expected[] = {1.764052345967664,  0.4001572083672233, 0.9787379841057392, 2.240893199201458,
                             1.8675579901499675, -0.977277879876411, 0.9500884175255894, -0.1513572082976979};
  for (double e : expected) CHECK(rng.standard_normal() == e);
}

TEST_CASE("random_sample reproduces np.random.seed(42); np.random.random_sample", "[random]") {
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
