// Output files that are written whole or not at all, through a large buffer.
//
// A dump can be gigabytes and takes seconds to write; if the run fails halfway (a bad
// token, a full disk, Ctrl-C) the user must not be left with a partial file that looks
// complete. OutputFile writes into a temporary file in the target's folder and renames it
// into place only on commit(); otherwise the temporary file is removed.
#ifndef ATTN_OUTPUT_FILE_H_
#define ATTN_OUTPUT_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

// Where the dump writers put their bytes: a file, or a string in the tests.
class ByteOutput {
 public:
  virtual ~ByteOutput() = default;
  virtual void write(const char* data, std::size_t size) = 0;
  void write(std::string_view text) { write(text.data(), text.size()); }
};

// Collects the bytes in memory.
class StringOutput : public ByteOutput {
 public:
  void write(const char* data, std::size_t size) override { text.append(data, size); }
  using ByteOutput::write;
  std::string text;
};

class OutputFile : public ByteOutput {
 public:
  // Creates the temporary file beside `path`; "-" writes straight to stdout instead.
  // InputError(path, "", "cannot write <what>: ...") when the folder is not writable.
  explicit OutputFile(const std::string& path, std::string what = "the dump");
  ~OutputFile() override;  // not committed: the temporary file is removed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(const char* data, std::size_t size) override;
  using ByteOutput::write;
  std::uint64_t bytes_written() const { return written_ + buffer_.size(); }

  // Flushes, closes and renames the temporary file to `path`.
  void commit();

 private:
  void flush();
  void write_all(const char* data, std::size_t size);
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_;
  std::string what_;
  std::string temp_path_;  // empty for stdout
  int fd_ = -1;
  bool committed_ = false;
  std::vector<char> buffer_;
  std::uint64_t written_ = 0;
};

}  // namespace attn

#endif  // ATTN_OUTPUT_FILE_H_
