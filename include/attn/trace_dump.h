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

#include "attn/model.h"
#include "attn/trace.h"

namespace attn {

void write_trace_json(std::ostream& out, const Trace& trace, const Model& model);

// Writes the dump to `path` whole or not at all: into a temporary file in the same folder,
// renamed into place when complete. "-" writes to stdout. InputError when the path cannot
// be written.
void write_trace_json_file(const std::string& path, const Trace& trace, const Model& model);

}  // namespace attn

#endif  // ATTN_TRACE_DUMP_H_
