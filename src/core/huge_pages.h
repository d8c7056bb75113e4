// Transparent huge pages for the big tensors (Tensor::uninitialized). Internal to src/.
#ifndef ATTN_CORE_HUGE_PAGES_H_
#define ATTN_CORE_HUGE_PAGES_H_

#include <cstddef>

namespace attn {

// Blocks of at least this many bytes are backed by 2 MiB pages where the system allows it.
constexpr std::size_t kHugePageBlockBytes = std::size_t{4} << 20;

// Asks the kernel to back the whole 2 MiB pages inside [p, p + bytes) with transparent
// huge pages (madvise MADV_HUGEPAGE; nothing where the system has none), before the block
// is first written. The first touch of a fresh 4 KiB page costs about 12 us on this
// project's virtual machines (a page fault): a 268 MB score tensor at 2048 tokens took 0.8
// s of faults; one fault of a 2 MiB page replaces 512 of them. Freed blocks stay in the
// heap (main.cpp's mallopt), so a reused block keeps its huge pages.
void advise_huge_pages(void* p, std::size_t bytes) noexcept;

}  // namespace attn

#endif  // ATTN_CORE_HUGE_PAGES_H_
