// Byte counts in messages: the one formatter, for memory estimates and for file sizes.
#ifndef ATTN_MODEL_BYTE_SIZE_H_
#define ATTN_MODEL_BYTE_SIZE_H_

#include <string>

namespace attn {

// The two ways a size is written. The texts are part of documented messages
// (docs/troubleshooting.md), so each keeps its own look.
enum class ByteStyle {
  // A memory estimate or limit: one decimal always, in KiB, MiB or GiB, as --max-memory
  // takes GiB. Below 1 MiB it is KiB, so that a small limit does not read "0.0 GiB":
  // "3.9 MiB", "1.0 GiB", "0.5 KiB".
  Memory,
  // A file size: bytes below 1 KiB, then KiB up to TiB, whole numbers without a decimal:
  // "12 bytes", "1.5 KiB", "256 MiB".
  File,
};

std::string byte_size_text(double bytes, ByteStyle style);

}  // namespace attn

#endif  // ATTN_MODEL_BYTE_SIZE_H_
