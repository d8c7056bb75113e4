#include "io/number_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

// fmt 9 and later export Dragonbox (fmt::detail::dragonbox::to_decimal): the shortest
// decimal of a double as (significand, exponent), three times faster than formatting
// through std::to_chars, which also picks a layout that we would then undo. It is fmt's
// internal API, so the portable route stays as the fallback and as the tests' reference.
#if FMT_VERSION >= 90000
#define ATTN_HAVE_DRAGONBOX 1
#endif

namespace attn {

namespace {

// v = digits * 10^exponent with the fewest digits that round-trip (no trailing zeros).
struct Decimal {
  std::uint64_t digits;
  int exponent;
};

Decimal shortest_decimal_portable(double v) {
  // std::to_chars in scientific form is also the shortest round-trip: "d.ddde±XX".
  char buffer[40];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer - 1, v, std::chars_format::scientific);
  *result.ptr = '\0';  // for atoi below
  Decimal d{0, 0};
  int fraction_digits = 0;
  bool after_point = false;
  const char* p = buffer;
  for (; p < result.ptr && *p != 'e'; ++p) {
    if (*p == '.') {
      after_point = true;
      continue;
    }
    d.digits = d.digits * 10 + static_cast<std::uint64_t>(*p - '0');
    if (after_point) ++fraction_digits;
  }
  d.exponent = std::atoi(p + 1) - fraction_digits;
  while (d.digits % 10 == 0 && d.digits != 0) {
    d.digits /= 10;
    ++d.exponent;
  }
  return d;
}

Decimal shortest_decimal(double v) {
#ifdef ATTN_HAVE_DRAGONBOX
  const auto d = fmt::detail::dragonbox::to_decimal(v);
  return Decimal{d.significand, d.exponent};
#else
  return shortest_decimal_portable(v);
#endif
}

constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Exactly 8 digits of v < 10^8 at p, as four independent pairs (no chain of divisions).
inline void write8(std::uint32_t v, char* p) {
  const std::uint32_t high = v / 10000, low = v % 10000;
  std::memcpy(p, kDigitPairs + 2 * (high / 100), 2);
  std::memcpy(p + 2, kDigitPairs + 2 * (high % 100), 2);
  std::memcpy(p + 4, kDigitPairs + 2 * (low / 100), 2);
  std::memcpy(p + 6, kDigitPairs + 2 * (low % 100), 2);
}

// The decimal digits of n (at most 20) at the end of buf[20]; returns how many.
int digits_of(std::uint64_t n, char* buf) {
  char* p = buf + 20;
  while (n >= 100000000) {
    p -= 8;
    write8(static_cast<std::uint32_t>(n % 100000000), p);
    n /= 100000000;
  }
  while (n >= 100) {
    const auto pair = static_cast<std::size_t>(n % 100) * 2;
    n /= 100;
    *--p = kDigitPairs[pair + 1];
    *--p = kDigitPairs[pair];
  }
  if (n >= 10) {
    *--p = kDigitPairs[n * 2 + 1];
    *--p = kDigitPairs[n * 2];
  } else {
    *--p = static_cast<char>('0' + n);
  }
  return static_cast<int>(buf + 20 - p);
}

// Fixed-size copies compile to two or three moves; a memcpy of a variable length is a
// call. The digits sit in a buffer with slack, so reading 16 or 24 bytes is always safe.
inline void copy16(char* to, const char* from) { std::memcpy(to, from, 16); }

char* write_layout(Decimal d, bool negative, char* out) {
  if (negative) *out++ = '-';
  char buf[48];  // the digits end at buf + 20; the rest is slack for the fixed copies
  const int n = digits_of(d.digits, buf);
  const char* digits = buf + 20 - n;
  const int sci = d.exponent + n - 1;  // the exponent of the first digit
  if (sci < -4 || sci >= 16) {
    // 1.2345e-07, 1e+16 (n <= 17: the digits after the first fit one copy)
    *out++ = digits[0];
    if (n > 1) {
      *out++ = '.';
      copy16(out, digits + 1);
      out += n - 1;
    }
    *out++ = 'e';
    *out++ = sci < 0 ? '-' : '+';
    const int e = std::abs(sci);
    if (e >= 100) *out++ = static_cast<char>('0' + e / 100);
    *out++ = kDigitPairs[(e % 100) * 2];
    *out++ = kDigitPairs[(e % 100) * 2 + 1];
    return out;
  }
  if (d.exponent >= 0) {
    // 1200.0: the digits (n <= 16 here), the zeros, ".0"
    copy16(out, digits);
    out += n;
    std::memset(out, '0', 16);
    out += d.exponent;
    *out++ = '.';
    *out++ = '0';
    return out;
  }
  if (sci >= 0) {
    // 12.345: the first sci + 1 digits, the point, the rest (each at most 16)
    copy16(out, digits);
    out[sci + 1] = '.';
    copy16(out + sci + 2, digits + sci + 1);
    return out + n + 1;
  }
  // 0.00123: at most three zeros after the point, then up to 17 digits
  out[0] = '0';
  out[1] = '.';
  std::memset(out + 2, '0', 4);
  out += 2 + (-sci - 1);
  std::memcpy(out, digits, 24);
  return out + n;
}

char* write_special(double v, char* out, bool& done) {
  done = true;
  const char* text = nullptr;
  if (std::isnan(v))
    text = "NaN";
  else if (std::isinf(v))
    text = v < 0 ? "-Infinity" : "Infinity";
  else if (v == 0)
    text = std::signbit(v) ? "-0.0" : "0.0";
  if (!text) {
    done = false;
    return out;
  }
  const std::size_t len = std::strlen(text);
  std::memcpy(out, text, len);
  return out + len;
}

}  // namespace

char* write_shortest(double v, char* out) {
  bool done;
  char* end = write_special(v, out, done);
  if (done) return end;
  return write_layout(shortest_decimal(std::fabs(v)), std::signbit(v), out);
}

std::string shortest_text(double v) {
  char buffer[kShortestScratch];
  return std::string(buffer, write_shortest(v, buffer));
}

std::string shortest_text_portable(double v) {
  char buffer[kShortestScratch];
  bool done;
  char* end = write_special(v, buffer, done);
  if (!done) end = write_layout(shortest_decimal_portable(std::fabs(v)), std::signbit(v), buffer);
  return std::string(buffer, end);
}

}  // namespace attn
