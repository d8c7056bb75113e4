#include "model/byte_size.h"

#include <catch2/catch.hpp>

using attn::byte_size_text;
using attn::ByteStyle;

TEST_CASE("memory sizes: one decimal, KiB to GiB, never 0.0 GiB", "[byte_size]") {
  CHECK(byte_size_text(512, ByteStyle::Memory) == "0.5 KiB");
  CHECK(byte_size_text(1024, ByteStyle::Memory) == "1.0 KiB");
  CHECK(byte_size_text(4096000, ByteStyle::Memory) == "3.9 MiB");
  CHECK(byte_size_text(1048576, ByteStyle::Memory) == "1.0 MiB");
  CHECK(byte_size_text(1073741824.0 - 1, ByteStyle::Memory) == "1024.0 MiB");
  CHECK(byte_size_text(1073741824.0, ByteStyle::Memory) == "1.0 GiB");
  // GiB is the largest unit, as --max-memory takes GiB: 2 TiB reads 2048.0 GiB.
  CHECK(byte_size_text(2199023255552.0, ByteStyle::Memory) == "2048.0 GiB");
}

TEST_CASE("file sizes: bytes below 1 KiB, whole numbers without a decimal, up to TiB", "[byte_size]") {
  CHECK(byte_size_text(0, ByteStyle::File) == "0 bytes");
  CHECK(byte_size_text(1, ByteStyle::File) == "1 byte");
  CHECK(byte_size_text(1023, ByteStyle::File) == "1023 bytes");
  CHECK(byte_size_text(1024, ByteStyle::File) == "1 KiB");
  CHECK(byte_size_text(1536, ByteStyle::File) == "1.5 KiB");
  CHECK(byte_size_text(100000, ByteStyle::File) == "97.7 KiB");
  CHECK(byte_size_text(268435456, ByteStyle::File) == "256 MiB");
  CHECK(byte_size_text(268435457, ByteStyle::File) == "256.0 MiB");
  CHECK(byte_size_text(2199023255552.0, ByteStyle::File) == "2 TiB");
}
