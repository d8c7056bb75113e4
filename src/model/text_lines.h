// A text file read line by line, never whole: attn train's data and --eval files (JSON
// Lines). Each line is checked as it is read, so that /dev/zero, a line without end or a
// binary file is refused at its first bad line, within a second and at small memory.
#ifndef ATTN_MODEL_TEXT_LINES_H_
#define ATTN_MODEL_TEXT_LINES_H_

#include <cstdint>
#include <functional>
#include <string>

namespace attn {

class TextLines {
 public:
  // `path` is a file, or "-" for standard input (named "<stdin>" in messages). `what` names
  // the kind of file ("a data file (JSON Lines)"). InputError if it does not exist, is a
  // directory or is a regular file larger than `max_bytes` (refused before reading); a
  // device or a pipe is read only up to `max_bytes`.
  TextLines(const std::string& path, std::uint64_t max_bytes, const char* what);
  // The lines of a text in memory, named `name` in messages.
  TextLines(std::string text, std::string name);
  ~TextLines();
  TextLines(const TextLines&) = delete;
  TextLines& operator=(const TextLines&) = delete;

  // The next line without its '\n' (a last line without one too); false at the end. An
  // InputError naming "NAME:N" if the line holds a NUL byte, or if it is longer than
  // `max_line` bytes (`expected()` says what a line may be: "a line of at most 16 MiB"),
  // found before reading more than `max_line` bytes and a chunk of it.
  bool next(std::string& line, std::size_t max_line, const std::function<std::string()>& expected);
  // The number of the line next() gave last, 1 for the first.
  std::size_t number() const { return number_; }
  const std::string& name() const { return name_; }

 private:
  bool refill();  // false at the end of the file

  std::string name_;
  const char* what_ = "a text file";
  int fd_ = -1;
  bool owns_fd_ = false;
  bool at_end_ = false;
  std::string buffer_;  // bytes read and not yet given, from at_ on
  std::size_t at_ = 0;
  std::uint64_t read_ = 0, max_bytes_ = 0;
  std::size_t number_ = 0;
};

}  // namespace attn

#endif  // ATTN_MODEL_TEXT_LINES_H_
