#include "core/memory_budget.h"

#include <sys/stat.h>
#include <unistd.h>

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

void count_json_parse(const std::string& path, const std::string& field, std::uint64_t text_bytes) {
  const std::uint64_t limit = memory_limit_in_force();
  Budget& b = budget();
  const std::lock_guard<std::mutex> lock(b.mutex);
  struct stat info {};
  const bool known = ::stat(path.c_str(), &info) == 0;
  if (known && b.files.count({info.st_dev, info.st_ino})) return;
  const long double cost = static_cast<long double>(text_bytes) * kJsonBytesPerTextByte;
  if (b.counted + cost > limit) {
    const std::string others =
        b.counted > 0 ? fmt::format(", with the {} the files read before take", memory_text(b.counted)) : "";
    throw InputError(path, field,
                     fmt::format("parsing its {} bytes of JSON could take about {} (up to {} bytes each){}, more "
                                 "than the limit of {}; raise --max-memory",
                                 text_bytes, memory_text(cost), kJsonBytesPerTextByte, others, memory_text(limit)));
  }
  b.counted += cost;
  if (known) b.files.insert({info.st_dev, info.st_ino});
}

}  // namespace attn
