// Weights read where a checkpoint stores them (attn/tensor.h's StoredMatrix), and the
// formats' numbers as the float64 values they are.
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <new>

#include "attn/error.h"
#include "attn/tensor.h"

namespace attn {

std::size_t stored_type_bytes(StoredType type) {
  switch (type) {
    case StoredType::F64:
      return 8;
    case StoredType::F32:
      return 4;
    case StoredType::F16:
    case StoredType::BF16:
      break;
  }
  return 2;
}

double half_to_double(std::uint16_t bits) {
  const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double value;
  if (exponent == 0)
    value = std::ldexp(static_cast<double>(mantissa), -24);  // subnormal: m · 2^-24
  else if (exponent == 31)
    value = mantissa ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else
    value = std::ldexp(static_cast<double>(mantissa + 1024), exponent - 25);  // (1024 + m) · 2^(e-15-10)
  return sign ? -value : value;
}

double bfloat16_to_double(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return static_cast<double>(f);
}

// memcpy reads each number at any alignment.
double widen_number(const unsigned char* bytes, StoredType type, std::size_t i) {
  switch (type) {
    case StoredType::F64: {
      double v;
      std::memcpy(&v, bytes + 8 * i, 8);
      return v;
    }
    case StoredType::F32: {
      float v;
      std::memcpy(&v, bytes + 4 * i, 4);
      return static_cast<double>(v);
    }
    case StoredType::F16:
    case StoredType::BF16:
      break;
  }
  std::uint16_t v;
  std::memcpy(&v, bytes + 2 * i, 2);
  return type == StoredType::F16 ? half_to_double(v) : bfloat16_to_double(v);
}

double StoredMatrix::at(std::size_t row, std::size_t column) const {
  if (panel == 0) return widen_number(bytes, type, transposed ? column * stride + row : row * stride + column);
  const std::size_t k = transposed ? column : row, p = transposed ? row : column;
  return widen_number(bytes, type, (p / panel * stride + k) * panel + panel_position(type, p % panel));
}

void StoredMatrix::widen_row(std::size_t row, std::size_t columns, double* out) const {
  if (!transposed && panel == 0 && type == StoredType::F32) {  // the common case, without a switch per number
    const unsigned char* from = bytes + 4 * row * stride;
    for (std::size_t c = 0; c < columns; ++c) {
      float v;
      std::memcpy(&v, from + 4 * c, 4);
      out[c] = static_cast<double>(v);
    }
    return;
  }
  for (std::size_t c = 0; c < columns; ++c) out[c] = at(row, c);
}

StoredMatrix StoredMatrix::transpose() const {
  StoredMatrix t = *this;
  t.transposed = !transposed;
  return t;
}

namespace {

// `bytes` of zeros, 64-byte aligned. A large block is mapped, its pages populated at once a
// run of panels at a time (populate_pages, as the copy reaches them): on this project's
// virtual machines fresh memory faulted in page by page cost about 12 us a page, and 2.47
// GB of Llama-1B-shaped panels populated took 0.8 to 1.4 s of system time in 4 KiB pages
// against 2.0 to 2.8 s in 2 MiB ones, a token reading them as fast (102 to 105 ms against
// 101 to 120).
constexpr std::size_t kMappedBlockBytes = std::size_t{4} << 20;
std::shared_ptr<unsigned char> zeroed_block(std::size_t bytes) {
  if (bytes >= kMappedBlockBytes) {
    void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) throw std::bad_alloc();
    return {static_cast<unsigned char*>(mapped), [bytes](unsigned char* b) { munmap(b, bytes); }};
  }
  void* block = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!block) throw std::bad_alloc();
  std::memset(block, 0, bytes);
  return {static_cast<unsigned char*>(block), [](unsigned char* b) { std::free(b); }};
}

// The pages of [block + from, block + to) of a mapped block, populated (MADV_POPULATE_WRITE,
// Linux 5.14; where it is refused they fault in as written).
void populate_pages(unsigned char* block, std::size_t from, std::size_t to) {
  const std::size_t page = 4096, start = from / page * page;
  if (to > start) madvise(block + start, to - start, MADV_POPULATE_WRITE);
}

// Panel `p` (its K = rows lines) of the (rows, columns) matrix m as read, numbers of kSize
// bytes copied as they are (Bits: an unsigned integer of kSize bytes). Transposed, each of
// the panel's columns is a stored row, read along into its place in every line; else each
// line is a run of a stored row.
template <class Bits, bool kPairs = false>
void fill_panel(const StoredMatrix& m, std::size_t rows, std::size_t columns, std::size_t p, unsigned char* out) {
  constexpr std::size_t kSize = sizeof(Bits), kWidth = 64 / kSize;
  // panel_position, its type known at compile time
  const auto position = [](std::size_t c) { return panel_position(kPairs ? StoredType::BF16 : StoredType::F32, c); };
  const std::size_t first = p * kWidth, count = std::min(kWidth, columns - first);
  Bits* lines = reinterpret_cast<Bits*>(out);  // 64-byte aligned
  const auto number = [&](std::size_t i) {
    Bits v;
    std::memcpy(&v, m.bytes + kSize * i, kSize);
    return v;
  };
  if (m.transposed) {
    // kWidth lines at a time: each stored row's next 64 bytes read into `block` (rows 4
    // KiB apart would share a first-level cache set if read a number at a time), then the
    // lines written whole
    Bits block[kWidth][kWidth] = {};
    std::size_t k = 0;
    for (; k + kWidth <= rows; k += kWidth) {
      for (std::size_t c = 0; c < count; ++c) std::memcpy(block[c], m.bytes + kSize * ((first + c) * m.stride + k), 64);
      for (std::size_t t = 0; t < kWidth; ++t)
        for (std::size_t c = 0; c < kWidth; ++c) lines[(k + t) * kWidth + position(c)] = block[c][t];
    }
    for (std::size_t c = 0; c < count; ++c)
      for (std::size_t t = k; t < rows; ++t) lines[t * kWidth + position(c)] = number((first + c) * m.stride + t);
  }
  for (std::size_t k = 0; k < rows && !m.transposed; ++k) {
    const std::size_t row = k * m.stride + first;
    Bits* line = lines + k * kWidth;
    if (kPairs)
      for (std::size_t c = 0; c < count; ++c) line[position(c)] = number(row + c);
    else
      std::memcpy(line, m.bytes + kSize * row, kSize * count);
  }
}

}  // namespace

StoredMatrix StoredMatrix::in_panels(std::size_t rows, std::size_t columns,
                                     const std::function<void(const unsigned char*, std::size_t)>& read_through) const {
  if (panel != 0) throw InternalError("StoredMatrix::in_panels: already in panels");
  const std::size_t size = stored_type_bytes(type), width = 64 / size, panels = (columns + width - 1) / width;
  const std::size_t bytes_needed = std::max<std::size_t>(64, panels * rows * 64);
  std::shared_ptr<unsigned char> panels_block = zeroed_block(bytes_needed);
  // every kReadThrough panels: their pages populated before, and (when transposed) the
  // stored rows they copied read through after
  constexpr std::size_t kReadThrough = 64;
  for (std::size_t p = 0; p < panels; ++p) {
    unsigned char* out = panels_block.get() + 64 * rows * p;
    if (p % kReadThrough == 0 && bytes_needed >= kMappedBlockBytes)
      populate_pages(panels_block.get(), 64 * rows * p, std::min(bytes_needed, 64 * rows * (p + kReadThrough)));
    if (size == 8)
      fill_panel<std::uint64_t>(*this, rows, columns, p, out);
    else if (size == 4)
      fill_panel<std::uint32_t>(*this, rows, columns, p, out);
    else if (type == StoredType::BF16)
      fill_panel<std::uint16_t, true>(*this, rows, columns, p, out);
    else
      fill_panel<std::uint16_t>(*this, rows, columns, p, out);
    if (read_through && transposed && rows > 0 && ((p + 1) % kReadThrough == 0 || p + 1 == panels)) {
      const std::size_t first_row = (p + 1 - ((p + 1) % kReadThrough ? (p + 1) % kReadThrough : kReadThrough)) * width;
      const std::size_t end_row = std::min(columns, (p + 1) * width);
      read_through(bytes + size * first_row * stride, size * ((end_row - first_row - 1) * stride + rows));
    }
  }
  StoredMatrix m;
  m.bytes = panels_block.get();
  m.type = type;
  m.stride = rows;
  m.panel = width;
  m.keep = std::move(panels_block);
  return m;
}

Tensor widened(const Tensor& t) {
  Tensor copy = t;
  widen_in_place(copy);
  return copy;
}

void widen_in_place(Tensor& t) {
  if (!t.stored) return;
  if (t.rank() != 2) throw InternalError("widen_in_place: a stored weight is a matrix");
  const std::shared_ptr<const StoredMatrix> stored = std::move(t.stored);
  const std::size_t rows = t.shape[0], columns = t.shape[1];
  t.data.resize(rows * columns);
  for (std::size_t r = 0; r < rows; ++r) stored->widen_row(r, columns, t.data.data() + r * columns);
}

}  // namespace attn
