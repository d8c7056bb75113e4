// The input of the encoder or of the decoder, from tokens.
#ifndef ATTN_FORWARD_EMBEDDING_BLOCK_H_
#define ATTN_FORWARD_EMBEDDING_BLOCK_H_

#include <optional>

#include "attn/model.h"
#include "attn/run_input.h"
#include "forward/trace_scope.h"

namespace attn {

// Text or tokens -> ids -> embeddings + positions, (B,S,N), recorded as the tokens.ids,
// tokens.padding_mask (when sentences were padded; also stored in *padding),
// embedding.lookup, embedding.scaled, embedding.token_type (a model with token types) and
// embedding.positional of the scope's sequence.
Tensor embed_sequence(const Model& model, const TokenInput& input, const TraceScope& at,
                      std::optional<Traced>* padding);

}  // namespace attn

#endif  // ATTN_FORWARD_EMBEDDING_BLOCK_H_
