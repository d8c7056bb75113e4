#include "model/load_context.h"

#include <string>
#include <unordered_set>
#include <utility>

namespace attn {

LoadContext::LoadContext(const std::string& source, const LoadOptions& load_options)
    : reader(source), options(load_options), rng(0) {
  if (options.collect_all_errors) reader.collect_into(&errors);
}

void LoadContext::stop_if_errors() const {
  if (errors.empty()) return;
  // A layer template repeated a thousand times makes the same mistake a thousand times:
  // each message once, in the order first found.
  std::vector<InputError> distinct;
  std::unordered_set<std::string> seen;
  for (const InputError& e : errors)
    if (seen.insert(e.what()).second) distinct.push_back(e);
  throw InputErrors(std::move(distinct));
}

}  // namespace attn
