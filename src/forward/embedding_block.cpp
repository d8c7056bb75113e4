// The start of either sequence: text -> tokens -> ids -> embeddings + positions.
#include "forward/embedding_block.h"

#include <fmt/format.h>

#include "model/token_input.h"
#include "steps/embedding.h"
#include "steps/masks.h"
#include "steps/positional_encoding.h"
#include "steps/residual.h"
#include "steps/tokenizer.h"

namespace attn {

namespace {

// The words split after an apostrophe, when the vocabulary knows every part: a French
// elision the training data writes apart ("J'aime" is "J' aime" to the built-in model, as
// "l'IA" is "l' IA"). Words split on spaces only (docs/tokenizer.md), so the note says how
// to write it: "; the vocabulary has it as \"J' aime\"". Empty when no such split exists.
std::string known_spelling_hint(const std::string& word, const Tokenizer& tokenizer) {
  std::string spelled, rest = word;
  for (std::size_t at; (at = rest.find('\'')) != std::string::npos && at + 1 < rest.size();) {
    const std::string part = rest.substr(0, at + 1);
    if (at == 0 || !tokenizer.lookup(part)) return "";
    spelled += part + " ";
    rest = rest.substr(at + 1);
  }
  if (spelled.empty() || !tokenizer.lookup(rest)) return "";
  return fmt::format("; the vocabulary has it apart, as \"{}{}\" (elisions are words of their own)", spelled, rest);
}

}  // namespace

Tensor embed_sequence(const Model& model, const TokenInput& input, const TraceScope& at,
                      std::optional<Traced>* padding) {
  // The model file's loader has checked every sentence (check_token_input): none is empty,
  // every token is known or <UNK> exists, <PAD> exists when lengths differ.
  const Sequence sequence = at.sequence();
  const char* axis = sequence == Sequence::Target ? "T" : "S";

  // 1. tokenize and look up ids, as the model's tokenizer does: (B lists) -> (B,S), padded
  const Tokenizer& tokenizer = *model.tokenizer;
  TokenIds ids = lookup_token_ids(token_lists(input, tokenizer), tokenizer);
  ids.ids.axes = {"B", axis};
  at.trace().set_tokens(sequence, ids.tokens);
  const Traced id_tensor = at.record(StepKind::TokenIds, ids.ids);
  for (std::size_t b = 0; b < ids.unknown.size(); ++b)
    for (std::size_t s = 0; s < ids.unknown[b].size(); ++s)
      if (ids.unknown[b][s])
        at.trace().warn(id_tensor.id, fmt::format("\"{}\" is not in the vocabulary: it becomes <UNK> (id {}){}",
                                                  ids.tokens[b][s], *tokenizer.special_id(SpecialRole::Unknown),
                                                  known_spelling_hint(ids.tokens[b][s], tokenizer)));

  // A sentence mostly of words the model never learned gets a confident answer that means
  // nothing: said once, plainly, when a quarter or more of its words are unknown.
  std::size_t words = 0, unknown_words = 0;
  for (std::size_t b = 0; b < ids.unknown.size(); ++b) {
    words += b < ids.lengths.size() ? ids.lengths[b] : ids.unknown[b].size();
    for (const bool unknown : ids.unknown[b]) unknown_words += unknown ? 1 : 0;
  }
  if (unknown_words > 0 && 4 * unknown_words >= words)
    at.trace().warn(id_tensor.id,
                    fmt::format("{} of the {} words {} not among the {} tokens this model knows, so its output "
                                "means little: 'attn vocab' lists the words it learned (with -c FILE: a model file's); "
                                "a real model, trained on a language, knows tens of thousands",
                                unknown_words, words, unknown_words == 1 ? "is" : "are", model.vocab.size()));

  for (const auto& note : input.notes) at.trace().warn(id_tensor.id, note);

  // 2. padding mask (B,S): 1 at every <PAD>, added to even out the lengths or written in the input
  bool padded = false;
  const auto pad = tokenizer.special_id(SpecialRole::Pad);
  for (std::size_t i = 0; pad && i < ids.ids.size(); ++i)
    padded = padded || ids.ids.data[i] == static_cast<double>(*pad);
  if (padded) *padding = at.record(StepKind::PaddingMask, padding_mask(ids.ids, *pad));

  // 3. embedding lookup: (B,S) ids into (V,N) -> (B,S,N), optionally * sqrt(N)
  Tensor x = embedding_lookup(ids.ids, model.embedding);
  at.record(StepKind::EmbeddingLookup, x,
            {at.operand(id_tensor), Trace::weight("E", model.embedding.shape, {"V", "N"})});
  if (model.config.scale_embeddings) {
    x = scale_embedding(x);
    at.record(StepKind::ScaledEmbedding, x);
  }

  // 4. token types (BERT): each position's type row added, type 0 for one sentence
  const std::size_t S = x.shape[1];
  if (model.token_types.has_values()) {
    Tensor rows = token_type_rows(Tensor({x.shape[0], S}, {"B", axis}), model.token_types);
    at.record(StepKind::TokenTypeEmbedding, rows, {Trace::weight("T", model.token_types.shape, {"types", "N"})});
    x = residual_add(x, rows);
  }

  // 5. positions: (S,N) added to every batch item
  // (RoPE adds nothing here: it turns the queries and keys inside attention.)
  if (model.config.positional_encoding != PositionalEncoding::None &&
      model.config.positional_encoding != PositionalEncoding::RoPE) {
    Tensor pe = model.config.positional_encoding == PositionalEncoding::Sinusoidal
                    ? sinusoidal_positions(S, model.config.d_model)
                    : learned_positions(model.position_table(sequence == Sequence::Target), S);
    pe.axes = {axis, "N"};
    at.record(StepKind::PositionalEncoding, pe);
    x = add_positions(x, pe);
  }
  return x;
}

}  // namespace attn
