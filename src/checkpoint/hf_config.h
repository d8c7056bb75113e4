// A Hugging Face model's config.json, as far as every architecture reads it alike: the file
// parsed and checked to be a JSON object, the architecture it names, and where generation
// stops (generation_config.json's eos_token_id, else config.json's). Each architecture
// reads the rest of its fields itself (src/arch/<name>.cpp), with the defaults of its
// configuration class, through ConfigFields (checkpoint/hf_config_fields.h).
#ifndef ATTN_CHECKPOINT_HF_CONFIG_H_
#define ATTN_CHECKPOINT_HF_CONFIG_H_

#include <cstddef>
#include <string>
#include <vector>

#include "checkpoint/json_file.h"

namespace attn {

struct HfConfigFile {
  std::string file;      // the config.json read, for messages
  Json json;             // the whole object
  std::string hf_class;  // its "architectures"[0]: "GPT2LMHeadModel"
};

// Reads `folder`/config.json. InputError naming the file and the field for a missing file,
// malformed JSON, or an "architectures" that is not a list of names (the message lists
// `supported`, the architectures attn reads).
HfConfigFile read_hf_config_file(const std::string& folder, const std::string& supported);

// Where generation stops: `folder`/generation_config.json's eos_token_id when it has one,
// else config.json's (an integer or a list; empty when neither says). InputError for an id
// outside the vocabulary's `vocab_size` rows.
std::vector<std::size_t> read_eos_token_ids(const std::string& folder, const HfConfigFile& config,
                                            std::size_t vocab_size);

}  // namespace attn

#endif  // ATTN_CHECKPOINT_HF_CONFIG_H_
