// Greedy generation of the decoder's input: with no target given, the decoder reads <BOS>
// and then the tokens the model predicts itself, one run of the model per token.
#include <algorithm>

#include "attn/forward.h"
#include "core/top_k.h"
#include "model/token_input.h"

namespace attn {

std::size_t generated_length(const Model& model) {
  std::size_t longest = 0;
  for (const auto& tokens : token_lists(model.source_tokens)) longest = std::max(longest, tokens.size());
  return std::clamp<std::size_t>(longest, 2, 8) - 1;
}

std::size_t extend_target_greedily(Model& model, std::size_t max_tokens) {
  TokenInput& target = model.target_tokens;
  if (!target.from_bos || !model.output.present || !model.has_target()) return 0;
  std::vector<std::vector<std::string>> lists = token_lists(target);
  const std::vector<std::size_t> never = model.vocab.never_written_ids();
  const auto end = model.vocab.find(Vocabulary::kEnd);
  std::vector<bool> ended(lists.size(), false);
  std::size_t added = 0;
  while (added < max_tokens && std::find(ended.begin(), ended.end(), false) != ended.end()) {
    Trace trace;
    trace.keep_entries(false);
    const Tensor p = run_model(model, trace);  // (B,T,V)
    const std::size_t T = p.shape[1], V = p.shape[2];
    std::vector<std::vector<std::string>> longer = lists;
    for (std::size_t b = 0; b < lists.size(); ++b) {
      const auto pick = top_tokens(p.data.data() + (b * T + T - 1) * V, V, 1, never);
      if (pick.empty() || (ended[b] && !model.vocab.pad_id())) break;
      longer[b].push_back(ended[b] ? Vocabulary::kPad : model.vocab.token(pick[0].id));
      ended[b] = ended[b] || (end && pick[0].id == *end);
    }
    if (longer[lists.size() - 1].size() == lists[0].size()) break;  // nothing could be added
    lists = std::move(longer);
    target.texts.clear();
    target.tokens = lists;
    ++added;
  }
  return added;
}

}  // namespace attn
