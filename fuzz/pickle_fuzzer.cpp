// libFuzzer target: any bytes, as a pytorch_model.bin and as the pickle inside one, must
// give checked tensors or one documented error.
//
// The properties checked:
// - parse_pytorch_bin (zip or legacy format) returns or throws attn::InputError whose
//   message is one printable line; every tensor it accepts lies inside the bytes given, its
//   span is its shape's elements at its dtype's width, and every element of a float tensor
//   can be read through its view (ASan watches the reads stay inside the bytes);
// - the same bytes run as a state dict's pickle by attn's machine (as data.pkl) end in a
//   value or one InputError, within the machine's limits, calling nothing.
// Anything else -- another exception, a crash, a sanitizer report, memory past
// -rss_limit_mb, a run past -timeout -- is a finding (scripts/fuzz).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "attn/error.h"
#include "checkpoint/pickle_reader.h"
#include "checkpoint/pytorch_bin.h"

namespace {

[[noreturn]] void finding(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "pickle_fuzzer: %s: %s\n", what.c_str(), detail.c_str());
  std::abort();
}

void check_one_line(const std::string& message) {
  if (message.empty()) finding("empty error message", "");
  for (const char c : message)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) finding("error message with a control character", message);
}

std::uint64_t width(const attn::StoredTensor& t) {
  if (t.dtype_name == "F64" || t.dtype_name == "I64") return 8;
  if (t.dtype_name == "F32" || t.dtype_name == "I32") return 4;
  if (t.dtype_name == "F16" || t.dtype_name == "BF16" || t.dtype_name == "I16") return 2;
  return 1;
}

void check_tensors(const std::vector<attn::StoredTensor>& tensors, const std::uint8_t* data, std::size_t size) {
  for (const auto& t : tensors) {
    if (t.end < t.begin || t.end > size) finding("span outside the file", t.name);
    if (static_cast<std::uint64_t>(t.element_count()) * width(t) != t.end - t.begin)
      finding("span disagreeing with the shape", t.name);
    if (t.dtype == attn::Dtype::Other) continue;
    const attn::TensorView view(t, data + t.begin);
    double sum = 0;
    for (std::size_t i = 0; i < view.size(); ++i) sum += view[i];
    (void)sum;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    check_tensors(attn::parse_pytorch_bin(data, size, "fuzz.bin"), data, size);
  } catch (const attn::InputError& e) {
    check_one_line(e.what());
  } catch (const std::exception& e) {
    finding("the .bin reader threw an undocumented exception", e.what());
  }
  try {
    attn::PickleMachine machine("fuzz.bin", "archive/data.pkl", attn::PersistentIds::Zip);
    const std::uint32_t root = machine.run(data, size);
    (void)machine.describe(root);
  } catch (const attn::InputError& e) {
    check_one_line(e.what());
  } catch (const std::exception& e) {
    finding("the pickle machine threw an undocumented exception", e.what());
  }
  return 0;
}
