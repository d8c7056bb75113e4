#include "attn/json_reader.h"

#include <catch2/catch.hpp>

TEST_CASE("json paths", "[json]") {
  CHECK(attn::json_child("", "model") == "model");
  CHECK(attn::json_child(attn::json_index("encoder", 0), "attention") == "encoder[0].attention");
}

TEST_CASE("did_you_mean finds typos and ignores unrelated words", "[json]") {
  CHECK(attn::did_you_mean("num_head", {"d_model", "num_heads", "d_head"}) == "num_heads");
  CHECK(attn::did_you_mean("W_Q", {"W_q", "W_k"}) == "W_q");
  CHECK(attn::did_you_mean("banana", {"d_model", "causal"}) == "");
}

TEST_CASE("reading a file that is missing or a directory", "[json][errors]") {
  try {
    attn::read_text_file("/nonexistent/model.json");
    FAIL("expected an error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()) == "/nonexistent/model.json: cannot open: no such file");
  }
  try {
    attn::read_text_file("/tmp");
    FAIL("expected an error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()) == "/tmp: expected a file, found a directory");
  }
}

TEST_CASE("choice lists the allowed values", "[json][errors]") {
  attn::JsonReader r("m.json");
  try {
    r.choice(attn::Json("rleu"), "model.activation", {"relu", "gelu"});
    FAIL("expected an error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()) ==
          "m.json: model.activation: expected one of \"relu\", \"gelu\", found \"rleu\"; did you mean \"relu\"?");
  }
}
