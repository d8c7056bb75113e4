#include "core/same_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

// A fresh folder under /tmp, removed at the end of the test case.
struct TempFolder {
  std::string path;
  TempFolder() {
    char name[] = "/tmp/attn-same-file-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempFolder() { std::system(("rm -rf '" + path + "'").c_str()); }
};

}  // namespace

TEST_CASE("same_file compares the file a name leads to, not the spelling", "[same_file]") {
  const TempFolder folder;
  const std::string a = folder.path + "/a.json";
  std::ofstream(a) << "{}";
  REQUIRE(::mkdir((folder.path + "/sub").c_str(), 0700) == 0);
  REQUIRE(::symlink(a.c_str(), (folder.path + "/link.json").c_str()) == 0);
  REQUIRE(::link(a.c_str(), (folder.path + "/hard.json").c_str()) == 0);
  std::ofstream(folder.path + "/b.json") << "{}";

  CHECK(attn::same_file(a, a));
  CHECK(attn::same_file(a, folder.path + "/./a.json"));
  CHECK(attn::same_file(a, folder.path + "/sub/../a.json"));
  CHECK(attn::same_file(a, folder.path + "/link.json"));
  CHECK(attn::same_file(folder.path + "/hard.json", a));
  CHECK_FALSE(attn::same_file(a, folder.path + "/b.json"));
  // Names of files not written yet: the same when their resolved paths are.
  CHECK(attn::same_file(folder.path + "/new.json", folder.path + "/sub/../new.json"));
  CHECK_FALSE(attn::same_file(folder.path + "/new.json", folder.path + "/sub/new.json"));
  CHECK_FALSE(attn::same_file(folder.path + "/new.json", a));
  // Standard input or output is only itself.
  CHECK(attn::same_file("-", "-"));
  CHECK_FALSE(attn::same_file("-", a));
  CHECK_FALSE(attn::same_file(a, "-"));
}
