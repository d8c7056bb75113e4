// Tokens as a learner reads them (attn/model.h).
#include "attn/model.h"

namespace attn {

std::string readable_token(const Model& model, const std::string& token) {
  if (!model.checkpoint.present() || !model.tokenizer) return token;
  const auto id = model.tokenizer->find(token);
  return id ? model.tokenizer->display_piece(*id) : token;
}

std::string readable_token(const Model& model, std::size_t id) {
  if (model.checkpoint.present() && model.tokenizer && id < model.tokenizer->size())
    return model.tokenizer->display_piece(id);
  return model.vocab.token(id);
}

}  // namespace attn
