#include "present/probability_text.h"

#include <catch2/catch.hpp>

using attn::probability_text;

// Hand-worked: with 2 decimals anything from 0.005 up shows a digit that is not zero; below
// that the probability keeps its two significant digits (printf's %.2g), never "0.00".
TEST_CASE("a probability keeps its significant digits when its decimals would read 0", "[probability_text]") {
  CHECK(probability_text(0.93, 2) == "0.93");
  CHECK(probability_text(0.005, 2) == "0.01");  // rounds to a digit: the decimals as before
  CHECK(probability_text(0.0049, 2) == "0.0049");
  CHECK(probability_text(0.000412, 2) == "0.00041");
  CHECK(probability_text(0.9957, 4) == "0.9957");
  CHECK(probability_text(0.00006, 4) == "0.0001");
  CHECK(probability_text(0.0000173, 4) == "1.7e-05");
  CHECK(probability_text(3.6e-13, 4) == "3.6e-13");
  CHECK(probability_text(0.0, 2) == "0.00");  // zero is zero
  CHECK(probability_text(1.0, 4) == "1.0000");
}
