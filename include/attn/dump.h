// The dumps of a trace, written while the model runs.
//
// JSON (docs/dump-format.md), for a name ending in ".json" or "-" (standard output):
//   {"format": "attn-trace", "version": 1, "model": {...}, "tensors": [{"name", "shape",
//    "axes", "data"}, ...], "parameters": [the same, for each of parameters() (attn/parameters.h),
//    or none: DumpParameters],
//    "tokens": {...}, "warnings": [...]}
// Tensors in the order computed, data nested like the shape, every double as Python's
// repr writes it (shortest round-trip). JSON has no infinity or NaN: DumpOptions say how
// they are written (by default as the strings "-Infinity", "Infinity", "NaN", which every
// JSON parser reads and float() and NumPy convert back). "tokens" comes last because the
// target's tokens are only known once the decoder starts.
//
// NumPy .npz, for a name ending in ".npz": one array per tensor, named after it
// (np.load(path)["encoder.0.attention.weights"]): float64, but the token ids int64 and the
// padding masks bool; then one per parameter, under its model-file path
// ("encoder.0.ffn.W_1"), unless DumpParameters leaves them out; then "__meta__.json", the JSON dump without the numbers
// (the model, each tensor's and parameter's shape, axes and dtype, the tokens, the warnings). See npz_writer.h.
//
// Either way the file is written whole or not at all (output_file.h).
#ifndef ATTN_DUMP_H_
#define ATTN_DUMP_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "attn/model.h"
#include "attn/run_input.h"
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

enum class DumpFormat { Json, Npz };

// How the JSON dump writes the values JSON has no number for (-inf in masks, inf and NaN
// after an overflow): --json-nonfinite.
//   String:  "-Infinity", "Infinity", "NaN" (quoted): valid JSON for every parser;
//            float(), np.array(..., dtype=float) and JavaScript's Number() read them back.
//   Null:    null: valid JSON, but -inf, inf and NaN all become the same null.
//   Literal: -Infinity, Infinity, NaN unquoted, as Python's json module writes them: not
//            JSON (browsers and strict parsers refuse the file), but json.load reads it.
enum class JsonNonFinite { String, Null, Literal };
// "string", "null", "literal"; nullopt for anything else.
std::optional<JsonNonFinite> parse_json_non_finite(const std::string& text);

// Whether the dump holds the model's parameters after the tensors: --dump-parameters.
// Auto: when they take at most kAutoDumpParametersBytes as float64 (a notebook-sized
// model's weights help check every number; a paper-sized model's, 390 MB of JSON for
// Transformer-base, are most of the file and can be drawn again from the model file).
// Left out, "parameters" is an empty list (JSON) and .npz has no parameter arrays.
enum class DumpParameters { Auto, Yes, No };
constexpr std::size_t kAutoDumpParametersBytes = std::size_t{16} << 20;  // 16 MiB
// "auto", "yes", "no"; nullopt for anything else.
std::optional<DumpParameters> parse_dump_parameters(const std::string& text);
// Whether `model`'s parameters go into a dump written with `choice`.
bool dump_includes_parameters(DumpParameters choice, const Model& model);

struct DumpOptions {
  JsonNonFinite non_finite = JsonNonFinite::String;
  DumpParameters parameters = DumpParameters::Auto;
};

// The format of the dump at `path`: JSON for "-" and names ending in ".json", .npz for
// ".npz", JSON for an existing device or pipe (/dev/stdout, a FIFO) whatever its name.
// InputError(path, "", "cannot write the dump: expected a name ending in .json or .npz,
// ...") for anything else: ".npy", ".NPZ" or no extension would silently become JSON.
DumpFormat dump_format(const std::string& path);

// A dump being written as the trace records: add() every record in order, then finish().
class TraceDump {
 public:
  // Opens `path` (a temporary file beside it; "-" is stdout, JSON). InputError when the
  // path cannot be written or has no known extension (dump_format).
  TraceDump(const std::string& path, const Model& model, const RunInput& input, const DumpOptions& options = {});
  // Writes to `out` instead, in `format` (the tests).
  TraceDump(ByteOutput& out, DumpFormat format, const Model& model, const RunInput& input,
            const DumpOptions& options = {});
  ~TraceDump();  // without finish(): nothing is left at `path`
  TraceDump(const TraceDump&) = delete;
  TraceDump& operator=(const TraceDump&) = delete;

  void add(const TraceRecord& record);
  // Writes the end (the tokens; the zip directory) and renames the file into place.
  void finish(const Trace& trace);
  // Bytes written so far, for progress.
  std::uint64_t bytes_written() const;

 private:
  class Json;
  class Npz;
  void open(DumpFormat format, const Model& model, const RunInput& input, const DumpOptions& options);
  std::unique_ptr<OutputFile> file_;
  ByteOutput* out_ = nullptr;
  std::unique_ptr<Json> json_;
  std::unique_ptr<Npz> npz_;
  const Model* model_;
  bool with_parameters_ = true;
};

// What a dump to `path` holds while it is written, besides the trace it writes from (bytes
// as malloc hands them out): its file's buffer; the JSON text in flight, in parts of 8K
// numbers or one row, each of the threads' slots keeping the largest part it formatted; a
// stored parameter widened to float64 as it is written; an .npz's list of its tensors.
// `shapes`: the shapes of what it takes from the run (the records; attn grad's gradients
// besides), each at least once, `tensors` of them in all; the parameters' are added as
// `options` says. The run's memory estimate counts it (attn/run_memory.h) before the dump
// opens.
std::uint64_t dump_held_bytes(const std::string& path, const Model& model, const DumpOptions& options,
                              const std::vector<const Shape*>& shapes, long double tensors);

// The whole JSON dump of a kept trace.
void write_trace_json(std::ostream& out, const Trace& trace, const Model& model, const RunInput& input,
                      const DumpOptions& options = {});

// The dump of a kept trace to `path`, JSON or .npz by its extension, whole or not at all
// (see OutputFile: a temporary file renamed into place; "-" is stdout; devices and pipes
// are written into; a symbolic link keeps pointing at the new dump).
void write_trace_file(const std::string& path, const Trace& trace, const Model& model, const RunInput& input,
                      const DumpOptions& options = {});

// Checks, before a run, that the dump can go to `dump_path` without destroying anything:
// refuses a name without a known extension (dump_format), a directory, a folder that does
// not exist, and any of `input_paths` (compared by device and inode, so another name or a
// link to the model file is caught too). "-" and empty input paths are skipped.
// InputError naming the dump path.
void check_dump_target(const std::string& dump_path, const std::vector<std::string>& input_paths);
// The same checks for any file a command writes: InputError(path, "", "cannot write <what>:
// ..."), a directory answered with an example name in it ("trace.json", "lesson.html").
void check_output_target(const std::string& path, const std::vector<std::string>& input_paths, const std::string& what,
                         const std::string& example_name);

}  // namespace attn

#endif  // ATTN_DUMP_H_
