// libFuzzer target: any bytes, as a model file, must give a Model or a documented error.
//
// The properties checked, for the loader as `attn explain` uses it (stop at the first
// error) and as `attn validate` uses it (collect every error):
// - it returns a model or throws attn::InputError / attn::InputErrors, whose messages are
//   each one printable line (main prints them as lines on stderr);
// - both modes agree: a file is valid for one exactly when it is valid for the other, and
//   the first error explain reports is the first one validate reports;
// - a model it accepts runs: run_model returns a trace or throws attn::NumericError (a
//   value overflowed), also one line.
// Anything else -- another exception, a crash, a leak, a sanitizer report, memory past
// the loader's limit -- is a finding: libFuzzer stops and saves the input as crash-*,
// leak-* or oom-* (scripts/fuzz; regression inputs go to tests/regression/).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_file.h"
#include "attn/trace.h"

namespace {

// The loader's memory limit for fuzzing: far below libFuzzer's -rss_limit_mb=2048, so a
// file that asks for more than the limit must be refused by the estimate, never allocated.
constexpr std::uint64_t kFuzzMemoryLimit = 256ULL << 20;
// Models the loader accepts under this smaller limit are also run; bigger ones would only
// slow the fuzzer down.
constexpr std::uint64_t kRunLimit = 4ULL << 20;

[[noreturn]] void finding(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "model_loader_fuzzer: %s: %s\n", what.c_str(), detail.c_str());
  std::abort();  // libFuzzer saves the input as crash-*
}

// An error message must be one line without terminal control characters: a key or a
// string from the file must not break it into several lines or recolour the terminal.
void check_one_line(const std::string& message) {
  if (message.empty()) finding("empty error message", "");
  for (const char c : message)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) finding("error message with a control character", message);
}

// The loader's verdict: the model, or the error messages in order (one for explain's mode).
struct Outcome {
  bool loaded = false;
  attn::LoadedModel model;
  std::vector<std::string> errors;
};

Outcome load(const std::string& text, std::uint64_t memory_limit, bool collect_all_errors) {
  attn::LoadOptions options;
  options.max_memory_bytes = memory_limit;
  options.collect_all_errors = collect_all_errors;
  Outcome outcome;
  try {
    outcome.model = attn::load_model_text(text, "fuzz.json", options);
    outcome.loaded = true;
  } catch (const attn::InputError& e) {
    outcome.errors.push_back(e.what());
  } catch (const attn::InputErrors& e) {
    if (e.errors().empty()) finding("InputErrors with no error in it", "");
    for (const auto& error : e.errors()) outcome.errors.push_back(error.what());
  } catch (const std::exception& e) {
    finding(collect_all_errors ? "the loader (validate mode) threw an undocumented exception"
                               : "the loader threw an undocumented exception",
            e.what());
  }
  for (const auto& message : outcome.errors) check_one_line(message);
  return outcome;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const Outcome first = load(text, kFuzzMemoryLimit, false);
  const Outcome all = load(text, kFuzzMemoryLimit, true);
  if (first.loaded != all.loaded)
    finding("explain and validate disagree",
            first.loaded ? "validate: " + all.errors.front() : "explain: " + first.errors.front());
  if (!first.loaded) {
    if (first.errors.front() != all.errors.front())
      finding("explain's error is not validate's first", first.errors.front() + " | " + all.errors.front());
    return 0;
  }

  const Outcome small = load(text, kRunLimit, false);
  if (!small.loaded) return 0;
  try {
    attn::Trace trace(!small.model.input.batched);
    attn::run_model(small.model.model, small.model.input, trace);
  } catch (const attn::NumericError& e) {
    check_one_line(e.what());
  } catch (const std::exception& e) {
    finding("run_model threw an undocumented exception on a model the loader accepted", e.what());
  }
  return 0;
}
