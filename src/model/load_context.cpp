#include "model/load_context.h"

namespace attn {

LoadContext::LoadContext(const std::string& source, const LoadOptions& load_options)
    : reader(source), options(load_options), rng(0) {
  if (options.collect_all_errors) reader.collect_into(&errors);
}

void LoadContext::stop_if_errors() const {
  if (!errors.empty()) throw InputErrors(errors);
}

}  // namespace attn
