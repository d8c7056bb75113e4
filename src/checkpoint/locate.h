// Where a model named on the command line is: a folder, or a Hub name looked up offline
// where huggingface_hub keeps its downloads (attn never downloads anything).
#ifndef ATTN_CHECKPOINT_LOCATE_H_
#define ATTN_CHECKPOINT_LOCATE_H_

#include <string>

namespace attn {

// The environment that decides huggingface_hub's cache: HF_HUB_CACHE, else HF_HOME/hub,
// else HOME/.cache/huggingface/hub.
struct HubEnvironment {
  std::string hf_hub_cache, hf_home, home;
  static HubEnvironment from_process();  // read from getenv
};

// huggingface_hub's cache folder for `env`.
std::string hub_cache_folder(const HubEnvironment& env);

// The folder `source` stands for:
// - a path to a folder ("./gpt2", "/models/x", or any existing folder): itself;
// - a Hub name ("gpt2", "HuggingFaceTB/SmolLM2-135M"): CACHE/models--ORG--NAME/snapshots/
//   <the commit in refs/main>/.
// InputError (one line) for a path that is a file, a path that does not exist, or a name
// not in the cache: where attn looked and `huggingface-cli download NAME`.
std::string locate_model(const std::string& source, const HubEnvironment& env);

}  // namespace attn

#endif  // ATTN_CHECKPOINT_LOCATE_H_
