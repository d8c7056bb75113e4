// What every reader of a model file's sections shares while one file loads: the JSON
// reader that names the file in errors, the options, the one "randn" stream (drawn in the
// documented order across sections), and in collect mode (attn validate) the errors found.
#ifndef ATTN_MODEL_LOAD_CONTEXT_H_
#define ATTN_MODEL_LOAD_CONTEXT_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "attn/error.h"
#include "attn/model_file.h"
#include "core/numpy_random.h"
#include "model/json_reader.h"

namespace attn {

// Larger than any model this tool is meant for, small enough that products never overflow.
constexpr std::size_t kMaxDimension = 1u << 24;

class LoadContext {
 public:
  LoadContext(const std::string& source, const LoadOptions& options);
  // The reader records into `errors` through a pointer: the context never moves.
  LoadContext(const LoadContext&) = delete;
  LoadContext& operator=(const LoadContext&) = delete;

  // Runs one independent part of the file. In collect mode its error is recorded and the
  // load goes on with the next part; otherwise the error propagates.
  template <class Read>
  void attempt(Read&& read) {
    if (!reader.collecting()) return read();
    try {
      read();
    } catch (const InputError& e) {
      record(e);
    } catch (const AlreadyReported&) {
    }
  }
  // Collect mode: keeps the error, and stops the load once there are enough to read.
  void record(InputError error) {
    errors.push_back(std::move(error));
    if (errors.size() >= kMaxReportedErrors) throw TooManyErrors{};
  }
  // In collect mode, stop here if anything was found (what follows depends on it).
  void stop_if_errors() const;

  JsonReader reader;
  const LoadOptions options;
  NumpyRandom rng;  // reseeded with model.seed once the hyper-parameters are read
  std::vector<InputError> errors;
  // The file gives a vocab that could not be read (reported already): what needs it is
  // skipped without a second error.
  bool vocab_unreadable = false;
  // A memory check refused the run: drawing "randn" for it could take forever.
  bool run_refused = false;
};

}  // namespace attn

#endif  // ATTN_MODEL_LOAD_CONTEXT_H_
