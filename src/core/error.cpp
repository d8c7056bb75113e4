#include "attn/error.h"

#include <cstdio>

#include "core/text.h"

namespace attn {

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const std::size_t n = utf8_length(text, i, &c);
    char escaped[16];
    if (n == 0) {
      // Not UTF-8: the byte itself, as Python writes it.
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(text[i]));
      out += escaped;
      ++i;
      continue;
    }
    if (!is_hidden_control(c)) {
      out.append(text, i, n);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    }
    i += n;
  }
  return out;
}

namespace {

// What a file wrote can be megabytes long (a key of two million letters): a path keeps its
// first and last 100 bytes, a message (whose own words are never that long) its first and
// last 500, cut where a UTF-8 character starts.
std::string shortened(const std::string& text, std::size_t kKeep = 100) {
  if (text.size() <= 2 * kKeep + 40) return text;
  std::size_t head = kKeep, tail = text.size() - kKeep;
  while (head > 0 && (static_cast<unsigned char>(text[head]) & 0xc0) == 0x80) --head;
  while (tail < text.size() && (static_cast<unsigned char>(text[tail]) & 0xc0) == 0x80) ++tail;
  return text.substr(0, head) + "…(" + std::to_string(tail - head) + " bytes)…" + text.substr(tail);
}

std::string join_location(const std::string& file, const std::string& path, const std::string& message) {
  std::string out;
  if (!file.empty()) out += shortened(file) + ": ";
  if (!path.empty()) out += shortened(path) + ": ";
  // Keys and strings in the message come from the file: a "\n" in a key must not split
  // the one-line error, nor an escape sequence recolour the terminal.
  return printable(out + shortened(message, 500));
}

}  // namespace

InputError::InputError(std::string file, std::string json_path, std::string message)
    : std::runtime_error(join_location(file, json_path, message)),
      file_(std::move(file)),
      json_path_(std::move(json_path)),
      message_(std::move(message)) {}

static std::string join_errors(const std::vector<InputError>& errors) {
  std::string out;
  for (const auto& e : errors) out += (out.empty() ? "" : "\n") + std::string(e.what());
  return out;
}

InputErrors::InputErrors(std::vector<InputError> errors)
    : std::runtime_error(join_errors(errors)), errors_(std::move(errors)) {}

}  // namespace attn
