// Reading one config.json field at a time, each error naming the file and the field.
#ifndef ATTN_CHECKPOINT_HF_CONFIG_FIELDS_H_
#define ATTN_CHECKPOINT_HF_CONFIG_FIELDS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/json_file.h"

namespace attn {

// Sizes past these are not a real model's (the largest vocabularies are about 2^18 rows);
// the memory estimate then refuses what would not fit.
constexpr std::size_t kMaxVocab = std::size_t{1} << 24;
constexpr std::size_t kMaxWidth = std::size_t{1} << 20;

class ConfigFields {
 public:
  ConfigFields(const Json& object, std::string file, std::string prefix = "")
      : object_(object), file_(std::move(file)), prefix_(std::move(prefix)) {}

  const std::string& file() const { return file_; }
  std::string path(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  // The field, or nullptr when it is absent or null (HF writes null for "the default").
  const Json* get(const std::string& key) const;
  // Whether the file writes the field at all, null included.
  bool has(const std::string& key) const { return object_.find(key) != object_.end(); }
  // A positive integer no larger than `max`; `fallback` when absent (0: required).
  std::size_t size(const std::string& key, std::size_t fallback = 0, std::size_t max = std::size_t{1} << 32) const;
  double positive_number(const std::string& key, std::optional<double> fallback) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string string(const std::string& key, const std::string& fallback) const;
  // An integer, or a list of integers, in [0, max): [] when absent or null.
  std::vector<std::size_t> ids(const std::string& key, std::size_t max) const;

 private:
  const Json& object_;
  std::string file_;
  std::string prefix_;
};

}  // namespace attn

#endif  // ATTN_CHECKPOINT_HF_CONFIG_FIELDS_H_
