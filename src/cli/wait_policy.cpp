// OMP_WAIT_POLICY=PASSIVE unless the user chose a policy, without running attn twice.
//
// libgomp reads OMP_WAIT_POLICY once, as it is loaded, before main: by default a thread
// waiting for work spins for up to 3 ms. On this machine kind a spinning thread slowed the
// other one threefold (a 128x512x512 product: 5.6 GFLOP/s on two spinning threads, 17.9 on
// two waiting passively, 17.7 on one; docs/performance.md). attn used to set the variable
// and execute itself again, which loaded every library twice (half of `attn explain "I love
// AI"`'s CPU time). Instead this getenv, which the dynamic linker binds libgomp's calls to
// (a program's own definition comes before the C library's), answers PASSIVE for an unset
// OMP_WAIT_POLICY and reads the environment as the C library's does for everything else.
// libomp (clang's OpenMP, the sanitized build's) reads its environment another way and
// keeps its own default.
//
// GOMP_SPINCOUNT likewise: 20000 unless the user chose (libgomp honours it under PASSIVE
// too), about 0.2 ms of spinning before a waiting thread sleeps. A generated token runs
// some fifty products in turn, each woken from sleep without it: GPT-2-small's shapes, a
// token in 28.8 to 29.1 ms sleeping at once, 25.4 spinning 20000, 24.7 to 25.0 under
// ACTIVE (2000: 26.2 to 26.5; 200000: 25.5 to 26.2).
//
// OMP_NUM_THREADS likewise: a value libgomp would refuse ("abc", "0", "-2") it would name in
// two lines of its own on stderr, before main. This getenv answers "unset" for it instead,
// and keeps it for main to refuse in one line of attn's (refused_thread_count, main.cpp).
#include "wait_policy.h"

#include <unistd.h>

#include <cstring>

namespace {

const char* refused_threads = nullptr;

// Whether libgomp reads `value` as OMP_NUM_THREADS: positive decimal integers, one per
// nesting level, separated by commas, spaces around them allowed (libgomp's env.c,
// parse_unsigned_long_list).
bool thread_list(const char* value) {
  const char* c = value;
  for (;;) {
    while (*c == ' ' || *c == '\t') ++c;
    const char* digits = c;
    bool positive = false;
    while (*c >= '0' && *c <= '9') positive |= *c++ != '0';
    if (c == digits || c - digits > 18 || !positive) return false;
    while (*c == ' ' || *c == '\t') ++c;
    if (*c == '\0') return true;
    if (*c++ != ',') return false;
  }
}

}  // namespace

namespace attn::cli {

const char* refused_thread_count() { return refused_threads; }

}  // namespace attn::cli

extern "C" char* getenv(const char* name) noexcept {
  if (name == nullptr || *name == '\0') return nullptr;
  const std::size_t length = std::strlen(name);
  if (environ != nullptr)
    for (char** entry = environ; *entry != nullptr; ++entry)
      if (std::strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') {
        char* value = *entry + length + 1;
        if (std::strcmp(name, "OMP_NUM_THREADS") != 0 || thread_list(value)) return value;
        if (*value != '\0') refused_threads = value;  // empty: as if unset, as a shell script means it
        return nullptr;
      }
  static char passive[] = "PASSIVE", short_spin[] = "20000";
  if (std::strcmp(name, "GOMP_SPINCOUNT") == 0) return short_spin;
  return std::strcmp(name, "OMP_WAIT_POLICY") == 0 ? passive : nullptr;
}
