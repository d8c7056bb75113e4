// Output files that are written whole or not at all, through a large buffer.
//
// A dump can be gigabytes and takes seconds to write; if the run fails halfway (a bad
// token, a full disk, Ctrl-C) the user must not be left with a partial file that looks
// complete. OutputFile writes into a temporary file in the target's folder and renames it
// into place only on commit(); otherwise the temporary file is removed, also when a
// signal (Ctrl-C, kill) stops the process.
#ifndef ATTN_IO_OUTPUT_FILE_H_
#define ATTN_IO_OUTPUT_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attn/dump.h"

namespace attn {

// A temporary file beside `target` (.target.tmp-XXXXXX, the name cut to fit 255 bytes; the
// same folder, so the rename stays on one file system), removed unless commit() renames
// it to `target`: on an exception, at exit(), and when any signal whose default is to end
// the process stops it while it exists (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE,
// SIGABRT, SIGUSR1/2, SIGALRM, SIGXCPU, SIGVTALRM, SIGPROF; SIGKILL cannot be caught: kill
// -9 mid-write leaves the .*.tmp-* file, but never a partial file under the target's
// name). It has the mode of the file it replaces, so a private file stays private. While
// it exists SIGXFSZ is ignored, so a file size limit (ulimit -f) makes the write fail with
// an error instead of killing the process. Up to four at a time are removed by the signal
// handlers (a dump and an HTML page are written at once); more are removed by their
// destructors and at exit only.
class TempFile {
 public:
  // InputError(target, "", "cannot write <what>: ...") if it cannot be created. commit()
  // refuses to replace a file the run read (core/read_files.h), but `update_of`: the one
  // input this output is the new version of (attn train -o over its own -c).
  explicit TempFile(const std::string& target, std::string what = "the dump", std::string update_of = "");
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }
  void commit();  // rename into place; InputError on failure (and the temporary file is removed)

 private:
  std::string target_;
  std::string what_;
  std::string update_of_;
  std::string path_;
  bool committed_ = false;
  int slot_ = -1;  // which of the signal handler's names is this file's; -1: none
};

class OutputFile : public ByteOutput {
 public:
  // Its buffer, reserved when it opens: big enough that a write(2) call costs little next
  // to the copy it makes.
  static constexpr std::size_t kBufferBytes = std::size_t{4} << 20;
  // What malloc hands out for it, at most: a block it maps on its own, in whole pages with
  // its header (4 MiB and a page), as the memory estimates count it.
  static constexpr std::size_t kBufferHeapBytes = kBufferBytes + 4096;

  // Creates the temporary file beside `path` (through a symbolic link: beside the file it
  // points to, which commit() replaces, keeping the link). "-" writes straight to stdout,
  // and an existing device or pipe (/dev/null, a FIFO) is written into directly, never
  // replaced. InputError(path, "", "cannot write <what>: ...") when it cannot be written,
  // or when it is a file the run reads (core/read_files.h: checked here and again before the
  // rename), unless it is `update_of`, the input this output is the new version of.
  explicit OutputFile(const std::string& path, std::string what = "the dump", std::string update_of = "");
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
  std::string update_of_;
  std::unique_ptr<TempFile> temp_;  // none for stdout, devices and pipes
  int fd_ = -1;
  bool owns_fd_ = false;
  bool committed_ = false;
  std::vector<char> buffer_;
  std::uint64_t written_ = 0;
};

}  // namespace attn

#endif  // ATTN_IO_OUTPUT_FILE_H_
