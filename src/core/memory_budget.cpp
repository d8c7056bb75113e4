#include "core/memory_budget.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

namespace {

struct Budget {
  std::mutex mutex;
  std::uint64_t limit = 0;
  long double counted = 0;                  // what the side files counted so far take
  std::set<std::pair<dev_t, ino_t>> files;  // the files counted
};

Budget& budget() {
  static Budget instance;
  return instance;
}

std::uint64_t half_the_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 4ULL << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 2;
}

}  // namespace

void set_memory_limit(std::uint64_t bytes) {
  Budget& b = budget();
  const std::lock_guard<std::mutex> lock(b.mutex);
  b.limit = bytes;
  b.counted = 0;
  b.files.clear();
}

std::uint64_t memory_limit_in_force() {
  Budget& b = budget();
  const std::lock_guard<std::mutex> lock(b.mutex);
  return b.limit ? b.limit : half_the_memory();
}

long double heap_block_bytes(long double bytes) {
  if (bytes <= 0) return 0;
  return std::max<long double>(24, std::ceil((bytes + 8) / 16) * 16 - 8);
}

long double string_heap_bytes(const std::string& text) {
  return text.size() > 15 ? heap_block_bytes(static_cast<long double>(text.size() + 1)) : 0;
}

std::string memory_text(long double bytes) {
  const char* const units[] = {"KiB", "MiB", "GiB"};
  long double value = bytes / 1024.0L;
  std::size_t unit = 0;
  while (value >= 1024.0L && unit < 2) {
    value /= 1024.0L;
    ++unit;
  }
  return fmt::format("{:.1f} {}", static_cast<double>(value), units[unit]);
}

std::uint64_t json_document_bound(const char* text, std::size_t size) {
  constexpr std::uint64_t kSlot = 48, kMember = 96, kObject = 64, kArray = 32, kString = 48;
  constexpr std::size_t kInlineString = 15;
  const auto string_bytes = [](std::size_t length) { return length > kInlineString ? length + 32 : 0; };
  std::uint64_t bytes = size, longest = 0;
  std::uint64_t pending_string = 0;  // a string just closed: a value, unless a ':' makes it a key
  bool string_pending = false, in_scalar = false;
  for (std::size_t i = 0; i < size; ++i) {
    const char c = text[i];
    if (c == '"') {  // a string to its closing quote, escapes skipped (raw bytes: an upper bound)
      std::size_t j = i + 1;
      while (j < size && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      const std::size_t length = j - i - 1;
      longest = std::max<std::uint64_t>(longest, length);
      if (string_pending) bytes += kSlot + kString + pending_string;  // two strings in a row: malformed
      pending_string = string_bytes(length);
      string_pending = true;
      in_scalar = false;
      i = j;
      continue;
    }
    const bool scalar_char =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '+' || c == '.';
    if (scalar_char) {  // a number, true, false or null: one slot, its digits inline
      if (!in_scalar) bytes += kSlot;
      in_scalar = true;
      continue;
    }
    in_scalar = false;
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (string_pending) bytes += c == ':' ? kMember + pending_string : kSlot + kString + pending_string;
    string_pending = false;
    if (c == '{') bytes += kSlot + kObject;
    if (c == '[') bytes += kSlot + kArray;
  }
  if (string_pending) bytes += kSlot + kString + pending_string;
  return bytes + longest;
}

namespace {

// Adds `cost` to the side files' count, or InputError when it would pass the limit; `add`
// false only checks (the text alone, before it is read).
void count_json_cost(const std::string& path, const std::string& field, std::uint64_t size, long double cost,
                     bool add) {
  const std::uint64_t limit = memory_limit_in_force();
  Budget& b = budget();
  const std::lock_guard<std::mutex> lock(b.mutex);
  struct stat info {};
  const bool known = ::stat(path.c_str(), &info) == 0;
  if (known && b.files.count({info.st_dev, info.st_ino})) return;
  if (b.counted + cost > limit) {
    const std::string others =
        b.counted > 0 ? fmt::format(", with the {} the files read before take", memory_text(b.counted)) : "";
    throw InputError(path, field,
                     fmt::format("parsing its {} bytes of JSON could take about {} (counted from its values, "
                                 "members and strings){}, more than the limit of {}; raise --max-memory",
                                 size, memory_text(cost), others, memory_text(limit)));
  }
  if (!add) return;
  b.counted += cost;
  if (known) b.files.insert({info.st_dev, info.st_ino});
}

}  // namespace

void check_json_text_fits(const std::string& path, const std::string& field, std::uint64_t size) {
  count_json_cost(path, field, size, static_cast<long double>(size), false);
}

void count_json_parse(const std::string& path, const std::string& field, const char* text, std::size_t size) {
  count_json_cost(path, field, size, static_cast<long double>(json_document_bound(text, size)), true);
}

}  // namespace attn
