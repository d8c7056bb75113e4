// The token tables: "vocab", its "embedding" (one row per token), the learned
// "positions" table, and the "prompt_template" that frames text in the vocabulary's tokens.
#ifndef ATTN_MODEL_VOCABULARY_SECTION_H_
#define ATTN_MODEL_VOCABULARY_SECTION_H_

#include "attn/model.h"
#include "model/json_reader.h"
#include "model/load_context.h"

namespace attn {

// Sets model.vocab and model.embedding (V, N) when the file has a vocab. Every token must
// be a distinct non-empty string; a duplicate names the index it repeats. In collect mode
// a duplicate is recorded and stands in under another name, so that the ids and the
// embedding's rows still line up.
void read_vocabulary(LoadContext& context, const Json& document, Model& model);

// Sets model.prompt_template when the file has one: a decoder-only model's, with a
// vocabulary, one "{}" where the text goes and every other token in the vocabulary.
void read_prompt_template(LoadContext& context, const Json& document, Model& model);

// Sets model.positions (max_len, N) when the file has the table, which it must exactly
// when model.positional_encoding is "learned".
void read_positions(LoadContext& context, const Json& document, Model& model);

}  // namespace attn

#endif  // ATTN_MODEL_VOCABULARY_SECTION_H_
