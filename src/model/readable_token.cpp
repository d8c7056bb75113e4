// Tokens as a learner reads them (attn/model.h).
#include "attn/error.h"
#include "attn/model.h"

namespace attn {

// Every token shown passes through printable(), as the error messages do: a checkpoint's
// display_piece is escaped already, and a model file's tokens were checked printable when
// it was read, but a token from anywhere else must not reach the terminal raw either.
std::string readable_token(const Model& model, const std::string& token) {
  if (!model.checkpoint.present() || !model.tokenizer) return printable(token);
  const auto id = model.tokenizer->find(token);
  return printable(id ? model.tokenizer->display_piece(*id) : token);
}

std::string readable_token(const Model& model, std::size_t id) {
  if (model.checkpoint.present() && model.tokenizer && id < model.tokenizer->size())
    return printable(model.tokenizer->display_piece(id));
  return printable(model.vocab.token(id));
}

}  // namespace attn
