#include "io/output_file.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "attn/error.h"
#include "core/read_files.h"
#include "error_message.h"

namespace {
std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
bool exists(const std::string& path) { return std::ifstream(path).good(); }
// Files in the current folder whose name starts with `prefix` (the temporary files).
int count_files(const std::string& prefix) {
  int n = 0;
  DIR* dir = ::opendir(".");
  while (dirent* e = ::readdir(dir)) n += std::string(e->d_name).rfind(prefix, 0) == 0;
  ::closedir(dir);
  return n;
}
}  // namespace

TEST_CASE("an output file appears only when committed, with every byte", "[output_file]") {
  const std::string path = "attn_output_file_test.bin";
  std::remove(path.c_str());
  {
    attn::OutputFile out(path);
    out.write("hello ");
    const std::string big(5 << 20, 'x');  // larger than the buffer: written straight through
    out.write(big.data(), big.size());
    out.write("!");
    CHECK(out.bytes_written() == 6 + big.size() + 1);
    CHECK_FALSE(exists(path));
    CHECK(count_files("." + path + ".tmp-") == 1);
    out.commit();
  }
  const std::string text = read_all(path);
  CHECK(text.size() == 6 + (5u << 20) + 1);
  CHECK(text.substr(0, 7) == "hello x");  // the buffered bytes before the big block
  CHECK(text.back() == '!');
  CHECK(count_files("." + path + ".tmp-") == 0);
  std::remove(path.c_str());
}

TEST_CASE("an output file not committed leaves nothing, not even over an old file", "[output_file]") {
  const std::string path = "attn_output_file_test2.bin";
  { std::ofstream(path) << "old"; }
  {
    attn::OutputFile out(path);
    out.write("partial");
  }
  CHECK(read_all(path) == "old");
  CHECK(count_files("." + path + ".tmp-") == 0);
  std::remove(path.c_str());
  {
    attn::OutputFile out(path);
    out.write("partial");
  }
  CHECK_FALSE(exists(path));
}

TEST_CASE("an output file in a missing folder is an input error naming the path", "[output_file]") {
  try {
    attn::OutputFile out("/nonexistent-dir/x.json");
    FAIL("expected an error");
  } catch (const attn::InputError& e) {
    CHECK(std::string(e.what()) == "/nonexistent-dir/x.json: cannot write the dump: No such file or directory");
  }
}

TEST_CASE("bytes come out in the order written, whatever the sizes of the blocks", "[output_file]") {
  const std::string path = "attn_output_file_test3.bin";
  std::string expected;
  {
    attn::OutputFile out(path);
    for (std::size_t size : {std::size_t{3}, std::size_t{3} << 20, std::size_t{10}, std::size_t{1} << 20,
                             std::size_t{5}, std::size_t{2} << 20, std::size_t{7}}) {
      const std::string block(size, static_cast<char>('a' + expected.size() % 26));
      out.write(block);
      expected += block;
    }
    out.commit();
  }
  CHECK(read_all(path) == expected);
  std::remove(path.c_str());
}

TEST_CASE("a replaced file keeps its permissions, a new one follows the umask", "[output_file]") {
  const std::string path = "attn_output_file_mode.bin";
  std::remove(path.c_str());
  { std::ofstream(path) << "old"; }
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  {
    attn::OutputFile out(path);
    out.write("new");
    out.commit();
  }
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);  // not widened to 0644
  CHECK(read_all(path) == "new");
  std::remove(path.c_str());
  const mode_t mask = ::umask(022);
  {
    attn::OutputFile out(path);
    out.write("fresh");
    out.commit();
  }
  ::umask(mask);
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
  std::remove(path.c_str());
}

TEST_CASE("a target name of 255 bytes can be written: the temporary name is cut to fit", "[output_file]") {
  const std::string path(255, 'n');
  std::remove(path.c_str());
  {
    attn::OutputFile out(path);
    out.write("long");
    CHECK(count_files("." + std::string(243, 'n') + ".tmp-") == 1);
    out.commit();
  }
  CHECK(read_all(path) == "long");
  std::remove(path.c_str());
}

TEST_CASE("a symbolic link that leads nowhere is refused, never replaced by a file", "[output_file]") {
  const std::string loop = "attn_output_file_loop";
  const std::string dangling = "attn_output_file_dangling";
  std::remove(loop.c_str());
  std::remove(dangling.c_str());
  REQUIRE(::symlink(loop.c_str(), loop.c_str()) == 0);
  REQUIRE(::symlink("attn_no_such_folder/x", dangling.c_str()) == 0);
  CHECK(attn_test::input_error_of([&] { attn::OutputFile out(loop); }) ==
        loop + ": cannot write the dump: it is a symbolic link that leads nowhere (Too many levels of symbolic links)");
  CHECK(attn_test::input_error_of([&] { attn::OutputFile out(dangling); }) ==
        dangling + ": cannot write the dump: it is a symbolic link that leads nowhere (No such file or directory)");
  struct stat st {};
  REQUIRE(::lstat(loop.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));  // still the link
  std::remove(loop.c_str());
  std::remove(dangling.c_str());
}

TEST_CASE("an output never replaces a file the run read, whatever name leads to it", "[output_file]") {
  // Issue 31: --html DIR/model.safetensors replaced the checkpoint it read. Every reader notes
  // its file (core/read_files.h); OutputFile refuses it when opened and again at commit.
  const std::string input = "attn_output_file_read_input.json";
  { std::ofstream(input) << "{\"weights\": 1}"; }
  attn::note_read_file(input);
  const std::string expected_open =
      "cannot write the dump: it is a file this run reads (" + input + "); choose another name for the dump";
  CHECK(attn_test::input_error_of([&] { attn::OutputFile out("./" + input); }) == "./" + input + ": " + expected_open);
  const std::string link = "attn_output_file_read_link.json";
  std::remove(link.c_str());
  REQUIRE(::symlink(input.c_str(), link.c_str()) == 0);
  CHECK_THROWS_AS(attn::OutputFile(link), attn::InputError);
  // A file read after the output was opened: refused at commit, the temporary file removed.
  const std::string later = "attn_output_file_read_later.json";
  { std::ofstream(later) << "[1, 2]"; }
  {
    attn::OutputFile out(later);
    out.write("replaced");
    attn::note_read_file(later);
    CHECK_THROWS_AS(out.commit(), attn::InputError);
  }
  CHECK(read_all(later) == "[1, 2]");
  CHECK(read_all(input) == "{\"weights\": 1}");
  CHECK(count_files("." + later + ".tmp-") == 0);
  std::remove(link.c_str());
  std::remove(input.c_str());
  std::remove(later.c_str());
}
