#include "core/json_found.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace attn {

std::string describe_json_value(const nlohmann::json& value, const JsonFoundWording& wording) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::null:
      return "null";
    case Type::boolean:
      return value.get<bool>() ? "true" : "false";
    case Type::number_integer:
    case Type::number_unsigned:
    case Type::number_float:
      return "the number " + value.dump();
    case Type::string: {
      const std::string& raw = value.get_ref<const std::string&>();
      std::string text = wording.json_escaped ? value.dump() : raw;
      if (raw.size() > wording.longest_string) text = text.substr(0, wording.cut_to) + wording.ellipsis;
      return wording.json_escaped ? "the string " + text : "the string \"" + text + "\"";
    }
    case Type::array:
      return wording.array_length ? fmt::format("an array of {}", value.size()) : "an array";
    case Type::object:
      return wording.object_keys ? fmt::format("an object with {} key{}", value.size(), value.size() == 1 ? "" : "s")
                                 : "an object";
    default:
      return wording.other;
  }
}

}  // namespace attn
