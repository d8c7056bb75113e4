// The JSON dump of a trace (docs/dump-format.md):
//   {"format": "attn-trace", "version": 1, "model": {...}, "tensors": [{"name", "shape",
//    "axes", "data"}, ...]}
// Tensors in the order computed, data nested like the shape, every double in its shortest
// round-trip form. JSON has no infinity: -inf (masked scores) is written as -Infinity, as
// Python's json module writes and reads it.
#ifndef ATTN_TRACE_DUMP_H_
#define ATTN_TRACE_DUMP_H_

#include <ostream>
#include <string>
#include <vector>

#include "attn/model.h"
#include "attn/trace.h"

namespace attn {

void write_trace_json(std::ostream& out, const Trace& trace, const Model& model);

// Writes the dump to `path` whole or not at all: into a temporary file in the same folder,
// renamed into place when complete (through a symbolic link: onto the file it points to).
// "-" writes to stdout; an existing device or pipe (/dev/null, a FIFO) is written
// directly, never replaced. InputError when the path cannot be written.
void write_trace_json_file(const std::string& path, const Trace& trace, const Model& model);

// Checks, before a run, that the dump can go to `dump_path` without destroying anything:
// refuses a directory, a folder that does not exist, and any of `input_paths` (compared by
// device and inode, so another name or a link to the model file is caught too). "-" and
// empty input paths are skipped. InputError naming the dump path.
void check_dump_target(const std::string& dump_path, const std::vector<std::string>& input_paths);

// A temporary file beside `target` (target.tmp-XXXXXX, same folder so the rename stays on
// one file system), removed unless commit() renames it to `target`: on an exception, and
// also when SIGINT, SIGTERM, SIGHUP or SIGQUIT stop the process while it exists (SIGKILL
// cannot be caught: kill -9 mid-write leaves the *.tmp-* file, but never a partial file
// under the target's name). While it exists SIGXFSZ is ignored, so a file size limit
// (ulimit -f) makes the write fail with an error instead of killing the process. One at a
// time holds the signal handlers.
class TempFile {
 public:
  explicit TempFile(const std::string& target);  // InputError naming `target` if it cannot be created
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }
  void commit();  // rename into place; InputError on failure (and the temporary file is removed)

 private:
  std::string target_;
  std::string path_;
  bool committed_ = false;
  bool owns_signals_ = false;
};

}  // namespace attn

#endif  // ATTN_TRACE_DUMP_H_
