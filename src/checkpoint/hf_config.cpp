#include "checkpoint/hf_config.h"

#include <fmt/format.h>

#include "attn/error.h"
#include "checkpoint/checkpoint_files.h"
#include "checkpoint/hf_config_fields.h"

namespace attn {

HfConfigFile read_hf_config_file(const std::string& folder, const std::string& supported) {
  HfConfigFile c;
  c.file = folder + "/config.json";
  refuse_other_than_file(c.file, "the model's configuration as a JSON file");
  if (!is_regular_file(c.file))
    throw InputError(folder, "", "found no config.json: expected a Hugging Face model folder");
  c.json = read_json_object_file(c.file);
  const ConfigFields fields(c.json, c.file);
  const Json* list = fields.get("architectures");
  if (!list) fields.fail("architectures", fmt::format("missing: expected one of {}", supported));
  if (!list->is_array() || list->empty() || !(*list)[0].is_string())
    fields.fail("architectures",
                fmt::format("expected a list holding one of {}, found {}", supported, describe_config_value(*list)));
  c.hf_class = (*list)[0].get<std::string>();
  return c;
}

std::vector<std::size_t> read_eos_token_ids(const std::string& folder, const HfConfigFile& config,
                                            std::size_t vocab_size) {
  std::vector<std::size_t> ids = ConfigFields(config.json, config.file).ids("eos_token_id", vocab_size);
  const std::string generation = folder + "/generation_config.json";
  refuse_other_than_file(generation, "the generation settings as a JSON file");
  if (is_regular_file(generation)) {
    const Json g = read_json_object_file(generation);
    const ConfigFields gfields(g, generation);
    if (gfields.get("eos_token_id")) ids = gfields.ids("eos_token_id", vocab_size);
  }
  return ids;
}

}  // namespace attn
