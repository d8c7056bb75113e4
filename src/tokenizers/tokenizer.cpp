#include "attn/tokenizer.h"

namespace attn {

const char* special_role_name(SpecialRole role) {
  switch (role) {
    case SpecialRole::Pad:
      return "pad";
    case SpecialRole::Unknown:
      return "unknown";
    case SpecialRole::Begin:
      return "begin";
    case SpecialRole::End:
      return "end";
  }
  return "?";
}

}  // namespace attn
