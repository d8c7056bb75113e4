// libFuzzer target: any bytes, as a model file, must give a Model or a documented error.
//
// The property checked: attn::load_model_text either returns a model or throws
// attn::InputError / attn::InputErrors (a bad model file) whose message is one printable
// line (main prints it as the single line on stderr). A model it accepts must then run:
// run_model returns a trace or throws attn::NumericError (a value overflowed). Anything
// else -- another exception, a crash, a leak, a sanitizer report, a run past the memory
// limit -- is a finding: libFuzzer stops and writes the input to crash-*/leak-*/oom-*.
//
// Built by scripts/fuzz (CMake option ATTN_FUZZ, clang only); seed corpus: data/ and
// tests/cli/bad/.
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "attn/error.h"
#include "attn/forward.h"
#include "attn/model_loader.h"
#include "attn/trace.h"

namespace {

// The loader's memory limit for fuzzing: far below libFuzzer's -rss_limit_mb=2048, so a
// file that asks for more than the limit must be refused by the estimate, never allocated.
constexpr std::uint64_t kFuzzMemoryLimit = 256ULL << 20;
// Models up to this estimate are also run, so that what the loader accepts is checked to
// be runnable; bigger ones would only slow the fuzzer down.
constexpr std::uint64_t kRunLimit = 4ULL << 20;

[[noreturn]] void finding(const char* what, const char* detail) {
  std::fprintf(stderr, "model_loader_fuzzer: %s: %s\n", what, detail);
  std::abort();  // libFuzzer saves the input as crash-*
}

// An error message must be one line without terminal control characters: a key or a
// string from the file must not break it into several lines or recolour the terminal.
void check_one_line(const char* message) {
  const std::string m = message;
  if (m.empty()) finding("empty error message", "");
  for (const char c : m)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) finding("error message with a control character", message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  attn::LoadOptions options;
  options.max_memory_bytes = kFuzzMemoryLimit;
  attn::Model model;
  try {
    model = attn::load_model_text(text, "fuzz.json", options);
  } catch (const attn::InputError& e) {
    check_one_line(e.what());
    return 0;
  } catch (const attn::InputErrors& e) {
    for (const auto& error : e.errors()) check_one_line(error.what());
    return 0;
  } catch (const std::exception& e) {
    finding("load_model_text threw an undocumented exception", e.what());
  }

  // The run's size: X gives it; text and tokens are bounded by their length.
  attn::RunSize run;
  run.encoder_layers = model.encoder.size();
  run.decoder_layers = model.decoder.size();
  run.vocab = model.vocab.size();
  const auto longest = [](const attn::TokenInput& input, std::size_t& batch, std::size_t& len) {
    batch = std::max<std::size_t>(batch, std::max(input.texts.size(), input.tokens.size()));
    for (const auto& t : input.texts) len = std::max(len, t.size());
    for (const auto& t : input.tokens) len = std::max(len, t.size());
  };
  if (model.input.rank() == 3) {
    run.batch = model.input.shape[0];
    run.seq_len = model.input.shape[1];
  }
  longest(model.source_tokens, run.batch, run.seq_len);
  if (model.target_input.rank() == 3) run.target_len = model.target_input.shape[1];
  std::size_t target_batch = 0;
  longest(model.target_tokens, target_batch, run.target_len);
  const std::uint64_t need = attn::estimate_run_bytes(model.config, run);
  if (need > kRunLimit) return 0;
  try {
    attn::Trace trace(!model.batched);
    attn::run_model(model, trace);
  } catch (const attn::NumericError& e) {
    check_one_line(e.what());
    return 0;
  } catch (const std::exception& e) {
    finding("run_model threw an undocumented exception on a model the loader accepted", e.what());
  }
  return 0;
}
