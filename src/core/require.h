// require(ok, what): the check of an internal promise, such as the shapes a step is given.
// A broken one is a bug in attn, never bad input (input is checked where it is read), so
// it throws attn::InternalError. Internal to src/.
#ifndef ATTN_CORE_REQUIRE_H_
#define ATTN_CORE_REQUIRE_H_

#include <string>

#include "attn/error.h"

namespace attn {

inline void require(bool ok, const char* what) {
  if (!ok) throw InternalError(what);
}
inline void require(bool ok, const std::string& what) {
  if (!ok) throw InternalError(what);
}

}  // namespace attn

#endif  // ATTN_CORE_REQUIRE_H_
