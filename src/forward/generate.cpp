// Greedy generation of the decoder's input: with no target given, the decoder reads <BOS>
// and then the tokens the model predicts itself, one run of the model per token, until it
// predicts <EOS>.
#include <algorithm>

#include "attn/forward.h"
#include "core/top_k.h"
#include "model/token_input.h"

namespace attn {

std::size_t generated_length(const RunInput& input) {
  std::size_t longest = 0;
  for (const auto& tokens : token_lists(input.source_tokens)) longest = std::max(longest, tokens.size());
  return std::clamp<std::size_t>(longest + 2, 1, 15);
}

std::size_t extend_target_greedily(const Model& model, RunInput& input, std::size_t max_tokens) {
  TokenInput& target = input.target_tokens;
  if (!target.from_bos || !model.output.present || !model.has_target()) return 0;
  std::vector<std::vector<std::string>> lists = token_lists(target);
  const std::vector<std::size_t> never = never_generated_ids(model);
  const auto pad = model.vocab.special_id(SpecialRole::Pad);
  // A sentence has ended once its last position predicts <EOS>: the decoder never reads the
  // <EOS> it wrote, so the lesson's last row is the one that predicts it.
  std::vector<bool> ended(lists.size(), false);
  std::size_t added = 0;
  while (added < max_tokens) {
    Trace trace;
    trace.keep_entries(false);
    const Tensor p = run_model(model, input, trace);  // (B,T,V)
    const std::size_t T = p.shape[1], V = p.shape[2];
    std::vector<std::vector<std::string>> longer = lists;
    bool grew = false;
    for (std::size_t b = 0; b < lists.size(); ++b) {
      const auto pick =
          ended[b] ? std::vector<TokenProbability>{} : top_tokens(p.data.data() + (b * T + T - 1) * V, V, 1, never);
      ended[b] = ended[b] || pick.empty() || ends_text(model, pick[0].id);
      if (!ended[b]) {
        longer[b].push_back(model.vocab.token(pick[0].id));
        grew = true;
      } else {
        longer[b].push_back(pad ? model.vocab.token(*pad) : std::string());  // the batch's sentences keep one length
      }
    }
    target.predicts_end = ended;
    // Stop when every sentence has ended, or when an ended one cannot be padded.
    if (!grew || (lists.size() > 1 && !pad && std::find(ended.begin(), ended.end(), true) != ended.end())) break;
    lists = std::move(longer);  // (B, T+1) tokens
    target.texts.clear();
    target.tokens = lists;
    ++added;
  }
  return added;
}

}  // namespace attn
