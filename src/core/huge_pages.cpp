// advise_huge_pages (core/huge_pages.h): transparent huge pages for the big tensors.
#include <cstdint>

#include "core/huge_pages.h"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace attn {

void advise_huge_pages(void* p, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Only whole 2 MiB pages inside the block: the advice applies to whole pages, and a
  // neighbour's memory must not change. A failure (no THP in this kernel) changes nothing.
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1), last = (begin + bytes) & ~(kHuge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace attn
