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

static std::string join_location(const std::string& file, const std::string& path, const std::string& message) {
  std::string out;
  if (!file.empty()) out += file + ": ";
  if (!path.empty()) out += path + ": ";
  // Keys and strings in the message come from the file: a "\n" in a key must not split
  // the one-line error, nor an escape sequence recolour the terminal.
  return printable(out + message);
}

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
