// The registry: one row per architecture file. A new architecture is its file and a row here.
#include "arch/family.h"

#include <fmt/format.h>

#include "attn/error.h"
#include "checkpoint/hf_config.h"

namespace attn {

// Each architecture's row, defined in its own file (src/arch/<name>.cpp).
Family gpt2_family();
Family llama_family();
Family gpt_neo_family();
Family gpt_neox_family();
Family gemma_family();
Family phi_family();
Family bert_family();
Family marian_family();
Family bart_family();

const std::vector<Family>& families() {
  static const std::vector<Family> rows = {
      gpt2_family(), llama_family(), gpt_neo_family(), gpt_neox_family(), gemma_family(),
      phi_family(),  bert_family(),  marian_family(),  bart_family(),
  };
  return rows;
}

std::string supported_classes() {
  std::string out;
  for (const Family& row : families())
    for (const std::string& name : row.hf_classes) out += (out.empty() ? "" : ", ") + name;
  return out;
}

const Family* find_family(const std::string& hf_class) {
  for (const Family& row : families())
    for (const std::string& name : row.hf_classes)
      if (name == hf_class) return &row;
  return nullptr;
}

CheckpointConfig read_checkpoint_config(const std::string& folder) {
  const HfConfigFile file = read_hf_config_file(folder, supported_classes());
  const Family* family = find_family(file.hf_class);
  if (!family)
    throw InputError(
        file.file, "architectures[0]",
        fmt::format("the architecture \"{}\" is not supported (attn reads {})", file.hf_class, supported_classes()));
  CheckpointConfig c = family->read_config(ConfigFields(file.json, file.file), file.hf_class);
  c.file = file.file;
  c.json = file.json;
  c.hf_class = file.hf_class;
  c.family = family;
  c.eos_token_ids = read_eos_token_ids(folder, file, c.vocab_size);
  return c;
}

}  // namespace attn
