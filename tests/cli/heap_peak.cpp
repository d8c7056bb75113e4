// Preloaded by the cli.estimate_bounds tests (estimate_bounds.sh): the peak of the bytes
// malloc has handed out and not taken back (malloc_usable_size of each block, so the
// allocator's own rounding counts), written at exit to the file $ATTN_HEAP_PEAK_FILE names.
// That is the heap the memory estimate must cover: a run's resident set also holds the
// program's code and its libraries, which no estimate of a run counts.
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

std::atomic<long long> g_current{0}, g_peak{0};
void* (*g_malloc)(std::size_t);
void (*g_free)(void*);
void* (*g_calloc)(std::size_t, std::size_t);
void* (*g_realloc)(void*, std::size_t);
int (*g_posix_memalign)(void**, std::size_t, std::size_t);
void* (*g_aligned_alloc)(std::size_t, std::size_t);
void* (*g_memalign)(std::size_t, std::size_t);
// dlsym itself may allocate before the real functions are known: from here, never freed.
alignas(16) char g_early[1 << 16];
std::size_t g_early_used = 0;
bool g_resolving = false;

void resolve() {
  if (g_malloc || g_resolving) return;
  g_resolving = true;
  g_malloc = reinterpret_cast<void* (*)(std::size_t)>(dlsym(RTLD_NEXT, "malloc"));
  g_free = reinterpret_cast<void (*)(void*)>(dlsym(RTLD_NEXT, "free"));
  g_calloc = reinterpret_cast<void* (*)(std::size_t, std::size_t)>(dlsym(RTLD_NEXT, "calloc"));
  g_realloc = reinterpret_cast<void* (*)(void*, std::size_t)>(dlsym(RTLD_NEXT, "realloc"));
  g_posix_memalign = reinterpret_cast<int (*)(void**, std::size_t, std::size_t)>(dlsym(RTLD_NEXT, "posix_memalign"));
  g_aligned_alloc = reinterpret_cast<void* (*)(std::size_t, std::size_t)>(dlsym(RTLD_NEXT, "aligned_alloc"));
  g_memalign = reinterpret_cast<void* (*)(std::size_t, std::size_t)>(dlsym(RTLD_NEXT, "memalign"));
  g_resolving = false;
}

bool is_early(void* p) { return static_cast<char*>(p) >= g_early && static_cast<char*>(p) < g_early + sizeof g_early; }

void* early(std::size_t n) {
  void* p = g_early + g_early_used;
  g_early_used += (n + 15) & ~static_cast<std::size_t>(15);
  return g_early_used <= sizeof g_early ? p : nullptr;
}

void counted(void* p) {
  if (!p) return;
  const auto n = static_cast<long long>(malloc_usable_size(p));
  const long long now = g_current.fetch_add(n) + n;
  long long seen = g_peak.load();
  while (now > seen && !g_peak.compare_exchange_weak(seen, now)) {
  }
}

void uncounted(void* p) {
  if (p && !is_early(p)) g_current.fetch_sub(static_cast<long long>(malloc_usable_size(p)));
}

__attribute__((destructor)) void report() {
  const char* path = std::getenv("ATTN_HEAP_PEAK_FILE");
  if (!path) return;
  char line[64];
  const int length = std::snprintf(line, sizeof line, "%lld\n", g_peak.load());
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  if (::write(fd, line, static_cast<std::size_t>(length)) < 0) {
  }
  ::close(fd);
}

}  // namespace

extern "C" {

void* malloc(std::size_t n) {
  resolve();
  if (!g_malloc) return early(n);
  void* p = g_malloc(n);
  counted(p);
  return p;
}

void* calloc(std::size_t count, std::size_t size) {
  resolve();
  if (!g_calloc) {
    void* p = early(count * size);
    if (p) std::memset(p, 0, count * size);
    return p;
  }
  void* p = g_calloc(count, size);
  counted(p);
  return p;
}

void free(void* p) {
  if (!p || is_early(p)) return;
  resolve();
  uncounted(p);
  g_free(p);
}

void* realloc(void* p, std::size_t n) {
  resolve();
  if (is_early(p)) {
    void* q = malloc(n);
    if (q) std::memcpy(q, p, n);
    return q;
  }
  const long long before = p ? static_cast<long long>(malloc_usable_size(p)) : 0;
  void* q = g_realloc(p, n);
  if (!q && n) return q;  // p is untouched
  g_current.fetch_sub(before);
  counted(q);
  return q;
}

int posix_memalign(void** out, std::size_t alignment, std::size_t n) {
  resolve();
  const int result = g_posix_memalign(out, alignment, n);
  if (result == 0) counted(*out);
  return result;
}

void* aligned_alloc(std::size_t alignment, std::size_t n) {
  resolve();
  void* p = g_aligned_alloc(alignment, n);
  counted(p);
  return p;
}

void* memalign(std::size_t alignment, std::size_t n) {
  resolve();
  void* p = g_memalign(alignment, n);
  counted(p);
  return p;
}

}  // extern "C"
