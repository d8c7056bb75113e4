#include "model/default_model.h"

#include "default_model_data.h"

namespace attn {

const std::string& default_model_json() {
  static const std::string text(kDefaultModelJsonText);
  return text;
}

}  // namespace attn
