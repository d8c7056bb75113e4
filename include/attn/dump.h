// The dumps of a trace, written while the model runs.
//
// JSON (docs/dump-format.md):
//   {"format": "attn-trace", "version": 1, "model": {...}, "tensors": [{"name", "shape",
//    "axes", "data"}, ...], "parameters": [the same, for each of parameters() (attn/parameters.h)],
//    "tokens": {...}, "warnings": [...]}
// Tensors in the order computed, data nested like the shape, every double as Python's
// repr writes it (shortest round-trip). JSON has no infinity: -inf (masked scores) is
// written as -Infinity, as Python's json module writes and reads it. "tokens" comes last
// because the target's tokens are only known once the decoder starts.
//
// NumPy .npz (when the path ends in ".npz"): one float64 array per tensor, named after it
// (np.load(path)["encoder.0.attention.weights"]), then one per parameter, under its
// model-file path ("encoder.0.ffn.W_1"); see npz_writer.h.
//
// Either way the file is written whole or not at all (output_file.h).
#ifndef ATTN_DUMP_H_
#define ATTN_DUMP_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "attn/model.h"
#include "attn/trace.h"

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

class OutputFile;

// A dump being written as the trace records: add() every record in order, then finish().
class TraceDump {
 public:
  // Opens `path` (a temporary file beside it; "-" is stdout, JSON). InputError when the
  // path cannot be written.
  TraceDump(const std::string& path, const Model& model);
  // Writes to `out` instead, JSON or .npz as asked (the tests).
  TraceDump(ByteOutput& out, bool npz, const Model& model);
  ~TraceDump();  // without finish(): nothing is left at `path`
  TraceDump(const TraceDump&) = delete;
  TraceDump& operator=(const TraceDump&) = delete;

  void add(const TraceRecord& record);
  // Writes the end (the tokens; the zip directory) and renames the file into place.
  void finish(const Trace& trace);
  // Bytes written so far, for progress.
  std::uint64_t bytes_written() const;

  static bool is_npz_path(const std::string& path);

 private:
  class Json;
  std::unique_ptr<OutputFile> file_;
  ByteOutput* out_;
  std::unique_ptr<Json> json_;
  std::unique_ptr<class NpzWriter> npz_;
  const Model* model_;
};

// The whole JSON dump of a kept trace.
void write_trace_json(std::ostream& out, const Trace& trace, const Model& model);

// The dump of a kept trace to `path`, JSON or .npz by its extension, whole or not at all
// (see OutputFile: a temporary file renamed into place; "-" is stdout; devices and pipes
// are written into; a symbolic link keeps pointing at the new dump).
void write_trace_file(const std::string& path, const Trace& trace, const Model& model);

// Checks, before a run, that the dump can go to `dump_path` without destroying anything:
// refuses a directory, a folder that does not exist, and any of `input_paths` (compared by
// device and inode, so another name or a link to the model file is caught too). "-" and
// empty input paths are skipped. InputError naming the dump path.
void check_dump_target(const std::string& dump_path, const std::vector<std::string>& input_paths);

}  // namespace attn

#endif  // ATTN_DUMP_H_
