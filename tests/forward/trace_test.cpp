#include "attn/trace.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using attn::Tensor;

TEST_CASE("a trace keeps every record in order, the B axis dropped for unbatched runs", "[trace]") {
  attn::Trace trace(true);
  Tensor x({1, 2, 3}, {"B", "S", "N"});
  x.data = {1, 2, 3, 4, 5, 6};
  trace.record("input", x);
  trace.record("twice", x, {trace.operand("input", x)});
  REQUIRE(trace.entries().size() == 2);
  CHECK(trace.entries()[0].tensor.shape == attn::Shape{2, 3});
  CHECK(trace.entries()[0].tensor.axes == attn::AxisNames{"S", "N"});
  CHECK(trace.entries()[1].operands[0].shape == attn::Shape{2, 3});
  CHECK(trace.find("twice")->tensor.data == x.data);
  CHECK(trace.find("missing") == nullptr);
}

TEST_CASE("a sink sees each record as it is made, without the trace keeping it", "[trace]") {
  attn::Trace trace(true);
  trace.keep_entries(false);
  std::vector<std::string> seen;
  const double* seen_data = nullptr;
  attn::Shape seen_shape;
  Tensor x({1, 2, 2}, {"B", "S", "N"});
  x.data = {1, 2, 3, 4};
  trace.set_sink([&](const attn::TraceRecord& r) {
    seen.push_back(r.name);
    seen_data = r.data;
    seen_shape = r.shape;
  });
  trace.record("a", x);
  trace.record("b", x);
  CHECK(seen == std::vector<std::string>{"a", "b"});
  CHECK(seen_data == x.data.data());  // borrowed, not copied
  CHECK(seen_shape == attn::Shape{2, 2});
  CHECK(trace.entries().empty());
  CHECK_FALSE(trace.keeps_entries());
}
