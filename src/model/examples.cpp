#include "model/examples.h"

#include <fmt/format.h>

#include "attn/error.h"
#include "model/json_reader.h"

namespace attn {

std::string example_short_name(const BundledExample& example) {
  const std::string name = example.name, prefix = "trained_";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : std::string();
}

const BundledExample& find_example(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& e : bundled_examples()) {
    if (name == e.name || name == example_short_name(e)) return e;
    names.push_back(e.name);
    if (!example_short_name(e).empty()) names.push_back(example_short_name(e));
  }
  // Accept the short form "seed000" for "seed000_batched_mha".
  const BundledExample* prefix_match = nullptr;
  int matches = 0;
  for (const auto& e : bundled_examples())
    if (std::string(e.name).rfind(name + "_", 0) == 0) {
      prefix_match = &e;
      ++matches;
    }
  if (matches == 1) return *prefix_match;
  const std::string suggestion = did_you_mean(name, names);
  throw InputError("--example", "",
                   fmt::format("no bundled example called \"{}\"{}; 'attn examples' lists them", name,
                               suggestion.empty() ? "" : " (did you mean \"" + suggestion + "\"?)"));
}

std::string example_summary(const BundledExample& example) {
  const Json doc = Json::parse(example.json);
  std::string comment = doc.value("comment", std::string());
  const auto end = comment.find(". ");
  if (end != std::string::npos) comment = comment.substr(0, end + 1);
  return comment;
}

}  // namespace attn
