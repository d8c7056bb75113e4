#include "checkpoint/hf_config_fields.h"

#include <cmath>

#include <fmt/format.h>

#include "attn/error.h"

namespace attn {

void ConfigFields::fail(const std::string& key, const std::string& message) const {
  throw InputError(file_, path(key), message);
}

const Json* ConfigFields::get(const std::string& key) const {
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::size_t ConfigFields::size(const std::string& key, std::size_t fallback, std::size_t max) const {
  const Json* v = get(key);
  if (!v) {
    if (fallback == 0) fail(key, "missing (this field is required)");
    return fallback;
  }
  if (!v->is_number_unsigned() || v->get<std::uint64_t>() == 0)
    fail(key, fmt::format("expected a positive integer, found {}", describe_config_value(*v)));
  const std::uint64_t n = v->get<std::uint64_t>();
  if (n > max) fail(key, fmt::format("expected at most {}, found {}", max, n));
  return static_cast<std::size_t>(n);
}

double ConfigFields::positive_number(const std::string& key, std::optional<double> fallback) const {
  const Json* v = get(key);
  if (!v) {
    if (!fallback) fail(key, "missing (this field is required)");
    return *fallback;
  }
  if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() <= 0)
    fail(key, fmt::format("expected a number > 0, found {}", describe_config_value(*v)));
  return v->get<double>();
}

bool ConfigFields::boolean(const std::string& key, bool fallback) const {
  const Json* v = get(key);
  if (!v) return fallback;
  if (!v->is_boolean()) fail(key, fmt::format("expected true or false, found {}", describe_config_value(*v)));
  return v->get<bool>();
}

std::string ConfigFields::string(const std::string& key, const std::string& fallback) const {
  const Json* v = get(key);
  if (!v) return fallback;
  if (!v->is_string()) fail(key, fmt::format("expected a string, found {}", describe_config_value(*v)));
  return v->get<std::string>();
}

std::vector<std::size_t> ConfigFields::ids(const std::string& key, std::size_t max) const {
  const Json* v = get(key);
  if (!v) return {};
  const auto one = [&](const Json& id) {
    if (!id.is_number_unsigned() || id.get<std::uint64_t>() >= max)
      fail(key, fmt::format("expected token ids from 0 to {}, found {}", max - 1, describe_config_value(id)));
    return static_cast<std::size_t>(id.get<std::uint64_t>());
  };
  if (!v->is_array()) return {one(*v)};
  std::vector<std::size_t> out;
  for (const auto& id : *v) out.push_back(one(id));
  return out;
}

}  // namespace attn
