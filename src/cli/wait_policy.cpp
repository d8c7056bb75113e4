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
#include <unistd.h>

#include <cstring>

extern "C" char* getenv(const char* name) noexcept {
  if (name == nullptr || *name == '\0') return nullptr;
  const std::size_t length = std::strlen(name);
  if (environ != nullptr)
    for (char** entry = environ; *entry != nullptr; ++entry)
      if (std::strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') return *entry + length + 1;
  static char passive[] = "PASSIVE";
  return std::strcmp(name, "OMP_WAIT_POLICY") == 0 ? passive : nullptr;
}
