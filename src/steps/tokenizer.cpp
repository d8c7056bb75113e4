#include "steps/tokenizer.h"

#include <algorithm>

#include "attn/error.h"

namespace attn {

TokenIds lookup_token_ids(const std::vector<std::vector<std::string>>& batch, const Tokenizer& tokenizer) {
  // (B lists of tokens) -> ids (B,S), S the longest list
  std::size_t S = 0;
  for (const auto& sentence : batch) S = std::max(S, sentence.size());
  const std::size_t B = batch.size();
  TokenIds out;
  out.ids = Tensor({B, S}, {"B", "S"});
  const auto pad = tokenizer.special_id(SpecialRole::Pad);
  const auto unk = tokenizer.special_id(SpecialRole::Unknown);
  for (std::size_t b = 0; b < B; ++b) {
    out.lengths.push_back(batch[b].size());
    std::vector<std::string> tokens;
    std::vector<bool> unknown;
    for (std::size_t s = 0; s < S; ++s) {
      std::size_t id;
      if (s < batch[b].size()) {
        const auto found = tokenizer.lookup(batch[b][s]);
        if (found) {
          id = *found;
        } else if (unk) {
          id = *unk;
        } else {
          throw InternalError("lookup_token_ids: unknown token \"" + batch[b][s] +
                              "\" and the vocabulary has no \"<UNK>\" (check_token_input lets none through)");
        }
        tokens.push_back(batch[b][s]);
        unknown.push_back(!found);
      } else {
        if (!pad)
          throw InternalError(
              "lookup_token_ids: sentences of different lengths and no \"<PAD>\" (check_token_input lets none "
              "through)");
        id = *pad;
        tokens.push_back(tokenizer.piece(id));
        unknown.push_back(false);
      }
      out.ids.data[b * S + s] = static_cast<double>(id);
    }
    out.tokens.push_back(std::move(tokens));
    out.unknown.push_back(std::move(unknown));
  }
  return out;
}

}  // namespace attn
