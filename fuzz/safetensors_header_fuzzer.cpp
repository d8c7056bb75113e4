// libFuzzer target: any bytes, as a safetensors file, must give a checked header or one
// documented error.
//
// The properties checked:
// - parse_safetensors_header returns or throws attn::InputError whose message is one
//   printable line;
// - a header it accepts is what the reader then relies on: every tensor's span lies inside
//   the data buffer, matches its shape and dtype, and the spans tile the buffer exactly;
//   every element of every float tensor can be read through its view (ASan watches the
//   reads stay inside the bytes given).
// Anything else -- another exception, a crash, a sanitizer report, memory past
// -rss_limit_mb -- is a finding (scripts/fuzz).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "attn/error.h"
#include "checkpoint/safetensors.h"

namespace {

[[noreturn]] void finding(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "safetensors_header_fuzzer: %s: %s\n", what.c_str(), detail.c_str());
  std::abort();
}

void check_one_line(const std::string& message) {
  if (message.empty()) finding("empty error message", "");
  for (const char c : message)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) finding("error message with a control character", message);
}

std::uint64_t element_bytes(attn::Dtype dtype, const std::string& name) {
  switch (dtype) {
    case attn::Dtype::F64:
      return 8;
    case attn::Dtype::F32:
      return 4;
    case attn::Dtype::F16:
    case attn::Dtype::BF16:
      return 2;
    case attn::Dtype::Other:
      break;
  }
  return name.find("64") != std::string::npos   ? 8
         : name.find("32") != std::string::npos ? 4
         : name.find("16") != std::string::npos ? 2
                                                : 1;
}

void check_accepted(const attn::SafetensorsHeader& header, const std::uint8_t* data, std::size_t size) {
  if (header.data_start < 8 || header.data_start > size) finding("data start outside the file", "");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
  for (const auto& t : header.tensors) {
    if (t.end < t.begin || t.end > size - header.data_start) finding("span outside the data", t.name);
    if (static_cast<std::uint64_t>(t.element_count()) * element_bytes(t.dtype, t.dtype_name) != t.end - t.begin)
      finding("span disagreeing with the shape", t.name);
    spans.emplace_back(t.begin, t.end);
    if (t.dtype == attn::Dtype::Other) continue;
    const attn::TensorView view(t, data + header.data_start + t.begin);
    double sum = 0;
    for (std::size_t i = 0; i < view.size(); ++i) sum += view[i];
    (void)sum;
  }
  std::sort(spans.begin(), spans.end());
  std::uint64_t at = 0;
  for (const auto& [begin, end] : spans) {
    if (begin != at) finding("spans that do not tile the data", std::to_string(begin));
    at = end;
  }
  if (at != size - header.data_start) finding("spans that do not cover the data", std::to_string(at));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const attn::SafetensorsHeader header = attn::parse_safetensors_header(data, size, "fuzz.safetensors");
    check_accepted(header, data, size);
  } catch (const attn::InputError& e) {
    check_one_line(e.what());
  } catch (const std::exception& e) {
    finding("the header reader threw an undocumented exception", e.what());
  }
  return 0;
}
