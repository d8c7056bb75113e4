// Reading a file line by line: lines as a text editor counts them, and a bad line (a NUL
// byte, a line longer than allowed) refused when it is reached, naming the file and line.
#include "model/text_lines.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "error_message.h"

using attn_test::input_error_of;

namespace {

const auto kFour = [] { return std::string("a line of at most 4 bytes"); };

// Every line of `lines` under `max_line`, then "error: ..." if reading stopped on one.
std::vector<std::string> all_lines(attn::TextLines& lines, std::size_t max_line = 4) {
  std::vector<std::string> out;
  try {
    const auto expected = [&] { return "a line of at most " + std::to_string(max_line) + " bytes"; };
    for (std::string line; lines.next(line, max_line, expected);) out.push_back(line);
  } catch (const attn::InputError& e) {
    out.push_back(std::string("error: ") + e.what());
  }
  return out;
}

}  // namespace

TEST_CASE("lines are numbered from 1, empty lines and a last line without newline included", "[text_lines]") {
  attn::TextLines lines(std::string("ab\n\ncd"), "d.jsonl");
  std::string line;
  REQUIRE(lines.next(line, 4, kFour));
  CHECK((line == "ab" && lines.number() == 1));
  REQUIRE(lines.next(line, 4, kFour));
  CHECK((line.empty() && lines.number() == 2));
  REQUIRE(lines.next(line, 4, kFour));
  CHECK((line == "cd" && lines.number() == 3));
  CHECK_FALSE(lines.next(line, 4, kFour));
  attn::TextLines ends_with_newline(std::string("ab\n"), "d.jsonl");
  CHECK(all_lines(ends_with_newline) == std::vector<std::string>{"ab"});
  attn::TextLines empty(std::string(), "d.jsonl");
  CHECK(all_lines(empty).empty());
}

TEST_CASE("a bad line is refused when it is reached, after the good lines before it", "[text_lines]") {
  attn::TextLines nul(std::string("ab\ncd\nx\0y\nzz\n", 12), "d.jsonl");
  CHECK(all_lines(nul) ==
        std::vector<std::string>{
            "ab", "cd", "error: d.jsonl:3: column 2: expected text, found a NUL byte; is this the right file?"});
  attn::TextLines too_long(std::string("abcd\nabcde\n"), "d.jsonl");
  CHECK(all_lines(too_long) ==
        std::vector<std::string>{
            "abcd",
            "error: d.jsonl:2: expected a line of at most 4 bytes, found a longer line; is this the right file?"});
  // The last line, without a newline, too.
  attn::TextLines last(std::string("abcd\nabcde"), "d.jsonl");
  CHECK(all_lines(last).back() ==
        "error: d.jsonl:2: expected a line of at most 4 bytes, found a longer line; is this the right file?");
}

TEST_CASE("a device is refused at its first bad line, not read to the limit", "[text_lines][limits]") {
  const auto start = std::chrono::steady_clock::now();
  attn::TextLines zero("/dev/zero", 256ULL << 20, "a data file (JSON Lines)");
  CHECK(all_lines(zero, 16 << 20) ==
        std::vector<std::string>{"error: /dev/zero:1: column 1: expected text, found a NUL "
                                 "byte; is this the right file?"});
  // Reading the 256 MiB limit took 3.6 s and 519 MiB; the first chunk is all it needs.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  // A line without end is refused after max_line bytes and a chunk, not at the file's limit.
  char name[] = "/tmp/attn_text_lines_test_XXXXXX";
  const int fd = ::mkstemp(name);
  REQUIRE(fd >= 0);
  const std::string long_line(1 << 20, 'a');
  REQUIRE(::write(fd, long_line.data(), long_line.size()) == static_cast<ssize_t>(long_line.size()));
  ::close(fd);
  attn::TextLines file(name, 256ULL << 20, "a data file (JSON Lines)");
  CHECK(all_lines(file, 1000).back() ==
        "error: " + std::string(name) +
            ":1: expected a line of at most 1000 bytes, found a longer line; is this the "
            "right file?");
  // A regular file over the limit is refused before a byte is read, as a model file is.
  CHECK(input_error_of([&] { attn::TextLines small(name, 1000, "a data file (JSON Lines)"); }) ==
        std::string(name) +
            ": expected a data file (JSON Lines) of at most 1000 bytes, found 1 MiB (1048576 bytes); is "
            "this the right file?");
  std::remove(name);
  CHECK(input_error_of([&] { attn::TextLines missing("/nonexistent/d.jsonl", 1000, "a data file"); }) ==
        "/nonexistent/d.jsonl: cannot open: no such file");
  CHECK(input_error_of([&] { attn::TextLines folder("/tmp", 1000, "a data file"); }) ==
        "/tmp: expected a file, found a directory");
}

TEST_CASE("a data file named - is standard input, named <stdin>", "[text_lines]") {
  const int saved = ::dup(STDIN_FILENO);
  const int fd = ::open("/dev/zero", O_RDONLY);
  REQUIRE(fd >= 0);
  ::dup2(fd, STDIN_FILENO);
  ::close(fd);
  std::vector<std::string> got;
  {
    attn::TextLines lines("-", 256ULL << 20, "a data file (JSON Lines)");
    got = all_lines(lines);
  }
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  CHECK(got == std::vector<std::string>{
                   "error: <stdin>:1: column 1: expected text, found a NUL byte; is this the right file?"});
}
