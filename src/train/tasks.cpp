// The built-in tasks of attn train --task.
#include "attn/error.h"
#include "attn/model_file.h"
#include "attn/train.h"

namespace attn {

const std::vector<std::string>& task_names() {
  static const std::vector<std::string> names = {"copy", "reverse", "sort", "translate"};
  return names;
}

TrainingTask make_task(const std::string& name) {
  throw InputError("attn train", "--task", "not yet: " + name);
  return {};
}

}  // namespace attn
