#include "attn/error.h"

namespace attn {

static std::string join_location(const std::string& file, const std::string& path, const std::string& message) {
  std::string out;
  if (!file.empty()) out += file + ": ";
  if (!path.empty()) out += path + ": ";
  return out + message;
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
